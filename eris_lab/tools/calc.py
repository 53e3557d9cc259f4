"""``calc:evaluate`` (arithmetic on the parsed ``ast``, never ``eval``) and ``calc:convert`` (a unit table)."""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ..parse import parse_python

if TYPE_CHECKING:
    from ..execution import Session

__all__ = ["calc_evaluate", "calc_convert", "UNITS", "MAX_EXPRESSION_CHARS", "MAX_INT_BITS", "MAX_ROUND_DIGITS"]

MAX_EXPRESSION_CHARS = 500
MAX_INT_BITS = 4096  # larger integer results are refused (9**9**9 would take the machine)
#: ``round(x, n)`` with ``|n|`` past this is answered without computing ``10**|n|``: a finite
#: float has at most 1,075 decimals (2**-1074) and an int of MAX_INT_BITS at most 1,234 digits,
#: so ``round`` changes nothing above it and gives 0 below minus it. Python's own ``round(1,
#: -3*10**7)`` builds a 30-million-digit power while holding the GIL (a thread timeout never fires).
MAX_ROUND_DIGITS = 1300

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "log": math.log, "log10": math.log10, "log2": math.log2, "exp": math.exp, "abs": abs,
    "round": round, "floor": math.floor, "ceil": math.ceil, "min": min, "max": max, "radians": math.radians,
    "degrees": math.degrees,
}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _check_size(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise ToolError(f"the result is too large (more than {MAX_INT_BITS} bits)")
    if isinstance(value, float) and not math.isfinite(value):
        raise ToolError("the result is not a finite number")
    if isinstance(value, complex):
        raise ToolError("the result is not a real number")
    return value


def _round(values: list[Any]) -> Any:
    """``round(x[, n])`` bounded: ``|n| > MAX_ROUND_DIGITS`` is answered without big-integer work."""
    if len(values) not in (1, 2):
        raise ToolError(f"round: expected round(x) or round(x, digits), got {len(values)} arguments")
    if len(values) == 2:
        x, digits = values
        if isinstance(digits, bool) or not isinstance(digits, int):
            raise ToolError(f"round: digits must be an integer, got {digits!r}")
        if digits > MAX_ROUND_DIGITS:
            return x  # nothing to round that far right
        if digits < -MAX_ROUND_DIGITS:
            return type(x)(0)  # every digit of x is cut
    try:
        return _check_size(round(*values))
    except (ValueError, TypeError, OverflowError) as exc:
        raise ToolError(f"round: {exc}") from None


def _calc(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _calc(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _check_size(node.value)  # 1e400 reads as inf
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _calc(node.left), _calc(node.right)
        if isinstance(node.op, ast.Pow):
            if abs(right) > 10_000 or (abs(left) > 1 and abs(right) * math.log2(abs(left)) > MAX_INT_BITS):
                raise ToolError("the power is too large to compute")
        try:
            return _check_size(_BINOPS[type(node.op)](left, right))
        except ZeroDivisionError:
            raise ToolError("division by zero") from None
        except OverflowError:
            raise ToolError("the result is too large") from None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check_size(_UNARY[type(node.op)](_calc(node.operand)))
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
            and not node.keywords):
        values = [_calc(a) for a in node.args]
        if node.func.id == "round":
            return _round(values)
        try:
            return _check_size(_FUNCTIONS[node.func.id](*values))
        except (ValueError, TypeError, OverflowError) as exc:
            raise ToolError(f"{node.func.id}: {exc}") from None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
        raise ToolError("'^' is not a power here; write ** (2**8)")
    what = type(node).__name__ if not isinstance(node, ast.Name) else f"the name {node.id!r}"
    raise ToolError(f"not allowed in an arithmetic expression: {what}; allowed: numbers, + - * / // % **, "
                    f"parentheses, {', '.join(_CONSTANTS)}, and {', '.join(_FUNCTIONS)}")


def calc_evaluate(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``calc:evaluate``: arithmetic on the parsed ``ast`` (no ``eval``, no names but math ones);
    a float result is rounded to ``precision`` decimals (default 6)."""
    expression = args.get("expression", args.get("expr"))
    if not isinstance(expression, str) or not expression.strip():
        raise ToolError(f"expression: expected arithmetic text such as '(2 + 3) * 4', got {expression!r}")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"expression: longer than {MAX_EXPRESSION_CHARS} characters")
    text = expression.strip().replace("×", "*").replace("÷", "/").replace("−", "-")
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ToolError(f"expression: cannot read {expression!r} as arithmetic") from None
    try:
        result = _calc(tree)
    except RecursionError:
        raise ToolError("expression: nested too deeply") from None
    precision = args.get("precision", 6)
    if isinstance(result, float) and isinstance(precision, int) and not isinstance(precision, bool):
        result = round(result, max(0, min(precision, 20)))
    if isinstance(result, float) and result.is_integer() and abs(result) < 2**53:
        result = int(result)
    return {"expression": expression, "result": result}


#: Unit table of ``calc:convert``: alias -> (dimension, factor to the base unit).
#: Base units: metre, kilogram, second, litre, metre/second, byte, square metre; temperature
#: is affine and handled apart. Factors: SI definitions (NIST SP 811), US customary gallon.
UNITS: dict[str, tuple[str, float]] = {}


def _units(dimension: str, table: Mapping[float, tuple[str, ...]]) -> None:
    for factor, aliases in table.items():
        for alias in aliases:
            UNITS[alias] = (dimension, factor)


_units("length", {1.0: ("m", "meter", "meters", "metre", "metres"), 1000.0: ("km", "kilometer", "kilometers",
       "kilometre", "kilometres"), 0.01: ("cm", "centimeter", "centimeters", "centimetre", "centimetres"),
       0.001: ("mm", "millimeter", "millimeters", "millimetre", "millimetres"), 1609.344: ("mi", "mile", "miles"),
       0.9144: ("yd", "yard", "yards"), 0.3048: ("ft", "foot", "feet"), 0.0254: ("in", "inch", "inches"),
       1852.0: ("nmi", "nautical mile", "nautical miles")})
_units("mass", {1.0: ("kg", "kilogram", "kilograms", "kilo", "kilos"), 0.001: ("g", "gram", "grams"),
       1e-6: ("mg", "milligram", "milligrams"), 1000.0: ("t", "tonne", "tonnes", "metric ton"),
       0.45359237: ("lb", "lbs", "pound", "pounds"), 0.028349523125: ("oz", "ounce", "ounces"),
       6.35029318: ("st", "stone", "stones")})
_units("time", {1.0: ("s", "sec", "second", "seconds"), 60.0: ("min", "minute", "minutes"),
       3600.0: ("h", "hr", "hour", "hours"), 86400.0: ("d", "day", "days"), 604800.0: ("week", "weeks")})
_units("volume", {1.0: ("l", "liter", "liters", "litre", "litres"), 0.001: ("ml", "milliliter", "milliliters",
       "millilitre", "millilitres"), 3.785411784: ("gal", "gallon", "gallons"), 0.2365882365: ("cup", "cups"),
       0.0295735295625: ("fl oz", "fluid ounce", "fluid ounces"), 1000.0: ("m3", "cubic meter", "cubic metre")})
_units("speed", {1.0: ("m/s", "mps"), 1 / 3.6: ("km/h", "kmh", "kph"), 0.44704: ("mph",), 1852 / 3600: ("kn", "knot",
       "knots")})
_units("data", {1.0: ("b", "byte", "bytes"), 1e3: ("kb", "kilobyte", "kilobytes"), 1e6: ("mb", "megabyte",
       "megabytes"), 1e9: ("gb", "gigabyte", "gigabytes"), 1e12: ("tb", "terabyte", "terabytes"),
       1024.0: ("kib",), 1024.0**2: ("mib",), 1024.0**3: ("gib",), 1024.0**4: ("tib",)})
_units("area", {1.0: ("m2", "square meter", "square meters", "square metre"), 1e4: ("ha", "hectare", "hectares"),
       1e6: ("km2", "square kilometer", "square kilometre"), 4046.8564224: ("acre", "acres")})

_TEMPERATURE = {"c": "C", "°c": "C", "degc": "C", "celsius": "C", "f": "F", "°f": "F", "degf": "F",
                "fahrenheit": "F", "k": "K", "degk": "K", "kelvin": "K"}


def _unit(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ToolError(f"{what}: expected a unit such as 'km' or 'celsius', got {value!r}")
    return re.sub(r"\s+", " ", value.strip().lower().replace("degrees ", "").replace("degree ", ""))


def calc_convert(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``calc:convert``: ``value`` from unit ``from`` to unit ``to`` (length, mass, time, volume,
    speed, data, area, temperature)."""
    value = args.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ToolError(f"value: expected a number, got {value!r}")
    src = _unit(args.get("from", args.get("from_unit")), "from")
    dst = _unit(args.get("to", args.get("to_unit")), "to")
    if src in _TEMPERATURE or dst in _TEMPERATURE:
        if src not in _TEMPERATURE or dst not in _TEMPERATURE:
            raise ToolError(f"cannot convert {src!r} to {dst!r}: only temperatures convert to temperatures")
        kelvin = {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[_TEMPERATURE[src]]
        result = {"C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32, "K": kelvin}[_TEMPERATURE[dst]]
    else:
        for unit, what in ((src, "from"), (dst, "to")):
            if unit not in UNITS:
                known = ", ".join(sorted(k for k in UNITS if len(k) <= 4))
                raise ToolError(f"{what}: unknown unit {unit!r}; known: {known}, celsius, fahrenheit, kelvin")
        (dim_a, fa), (dim_b, fb) = UNITS[src], UNITS[dst]
        if dim_a != dim_b:
            raise ToolError(f"cannot convert {src!r} ({dim_a}) to {dst!r} ({dim_b})")
        result = value * fa / fb
    return {"value": value, "from": src, "to": dst, "result": round(result, 10)}


def unit_names() -> tuple[str, ...]:
    """Every unit name ``calc:convert`` knows (the unit table and the temperatures), for resolving
    a unit the model misspelled (``"celcius"``) through ``resolve-arg`` (issue 17)."""
    return tuple(sorted({*UNITS, *_TEMPERATURE}))
