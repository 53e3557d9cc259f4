"""Exceptions of eris_lab: one per noun, each a ``ValueError`` that carries where it happened.

Message shape (see STYLE.md): ``<where>: <what is wrong>; got <value!r>, expected <allowed>``.
Outer code may prefix ``where`` with its own context (file, then JSON path), as pypa/packaging does.
"""

from __future__ import annotations

__all__ = [
    "ErisLabError",
    "CatalogError",
    "SchemaError",
    "Unsatisfiable",
    "KnobsError",
    "EmbedError",
    "DataError",
    "LLMError",
    "OracleError",
    "NotFittedError",
    "ReportError",
    "LabError",
    "ToolError",
    "PatternError",
]


class ErisLabError(ValueError):
    """Base error for bad user input; the CLI turns it into one line on stderr and exit status 2.

    Parameters
    ----------
    message : str
        What is wrong, naming the value and what was allowed.
    where : str, optional
        File, JSON path or flag at fault; printed before the message.
    """

    def __init__(self, message: str, *, where: str = "") -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)

    def within(self, outer: str) -> "ErisLabError":
        """Return a copy whose ``where`` is prefixed by ``outer`` (a file or parent path)."""
        where = f"{outer}: {self.where}" if self.where else outer
        return type(self)(self.message, where=where)


class CatalogError(ErisLabError):
    """A tool catalogue (TOML descriptors, OpenAI functions, MCP tools/list) is malformed."""


class SchemaError(ErisLabError):
    """A JSON Schema cannot be compiled or is not a JSON Schema."""


class Unsatisfiable(SchemaError):
    """A schema (or a branch of one) that no JSON value satisfies; a union drops such branches."""


class KnobsError(ErisLabError):
    """A knobs file or knob value is invalid."""


class EmbedError(ErisLabError):
    """An embedding model is missing, cannot load, or returned vectors of the wrong shape."""


class DataError(ErisLabError):
    """A labelled query set or external data file is missing or malformed."""


class LLMError(ErisLabError):
    """A language model cannot load, rejects a grammar, or its server answered with an error."""


class OracleError(ErisLabError):
    """llama-cpp-python or the vocabulary model is missing or cannot be loaded (the grammar oracle)."""


class NotFittedError(ErisLabError):
    """A strategy or the tuner was used before ``fit``; the message says what to call."""


class ReportError(ErisLabError):
    """Bad report input: unknown parameter, unreadable TOML, no notebooks."""


class LabError(ErisLabError):
    """A lab server cannot start: a missing package, a port in use, a server that never answered."""


class ToolError(Exception):
    """An executor's expected failure (no such item, bad time zone); its text goes to the model.

    Not an :class:`ErisLabError`: it is the model's problem to fix, never the user's input, and a
    ``ValueError`` handler inside an executor must not swallow it.
    """


class PatternError(Exception):
    """A JSON Schema ``pattern`` outside the supported subset; ``index`` is where in the pattern.

    Machinery of ``grammar/_pattern.py``: the compiler turns it into a :class:`SchemaError` that
    names the JSON path, so it never reaches a user.
    """

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.message = message
        self.index = index
