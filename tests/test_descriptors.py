"""The demo catalogue in ``descriptors/`` and the loader's errors on bad descriptor files.

Model-free and fast: no embedder is loaded here (routing quality is checked elsewhere).
"""

from __future__ import annotations

import re
import tomllib
from datetime import datetime
from pathlib import Path

import jsonschema
import pytest

from eris_lab.catalog import load
from eris_lab.errors import CatalogError

ROOT = Path(__file__).resolve().parent.parent
DESCRIPTORS = ROOT / "descriptors"
CATALOG = load(DESCRIPTORS)
TOOLS = list(CATALOG)
IDS = [t.name for t in TOOLS]

#: The 56 names other modules and case files rely on (issue #2, "The demo catalogue").
EXPECTED_NAMES = frozenset(
    """agenda:list agenda:remove agenda:complete agenda:remind_at agenda:push agenda:remind_self
    clock:now clock:alarm clock:timer calendar:list calendar:get calendar:delete calendar:update
    calendar:create doc:ingest doc:query doc:delete doc:list doc:read web:fetch web:find web:search
    mail:check mail:read mail:delete mail:move mail:write mail:digest memory:query memory:commit
    memory:stage memory:staged_list memory:commit_all social:search social:home db:find_connections
    vault:read vault:write vault:list news:today news:search wiki:summary wiki:search weather:current
    weather:forecast transit:departures transit:route media:play media:pause media:search
    system:status system:volume skills:list skills:run calc:evaluate calc:convert""".split()
)

#: German function words, marking a hint as German (umlauts and ß count too).
GERMAN_WORDS = frozenset(
    """der die das den dem des ein eine einen einem einer mein meine meinen meinem meiner mir mich
    ich du dir ist sind wie was wann wo wer welche welcher für mit von zu zum zur auf aus und nicht
    noch bitte heute morgen gerade es ob über nach im""".split()
)
GERMAN_CHARS_RE = re.compile(r"[äöüß]", re.IGNORECASE)
#: English function words, marking a hint as English.
ENGLISH_WORDS = frozenset(
    """the my a to for me is are what how of on this that from with it please i do does when where
    who which any all some by""".split()
)
#: Verbs shared by many domains: alone they pull unrelated tools into a near-tie.
BARE_VERBS = frozenset(
    """remove delete open show list search find read write get check play run start stop cancel
    add create update move send save set look tell give make do""".split()
)
#: Optional descriptor fields; everything else listed here is required on every tool.
REQUIRED_TEXT = ("short_description", "when_to_use", "when_not_to_use")
_WORD_RE = re.compile(r"[\wäöüß'-]+", re.IGNORECASE)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(text)}


def _is_german(hint: str) -> bool:
    return bool(GERMAN_CHARS_RE.search(hint)) or bool(_words(hint) & GERMAN_WORDS)


def _is_english(hint: str) -> bool:
    return bool(_words(hint) & ENGLISH_WORDS) and not GERMAN_CHARS_RE.search(hint)


# ---------------------------------------------------------------------------------------------
# The catalogue as a whole
# ---------------------------------------------------------------------------------------------


def test_catalogue_has_at_least_50_tools_in_at_least_12_domains():
    assert len(CATALOG) >= 50
    assert len(CATALOG.domains) >= 12


def test_catalogue_holds_exactly_the_agreed_tool_names():
    assert set(CATALOG.names) == EXPECTED_NAMES


@pytest.mark.parametrize("path", sorted(DESCRIPTORS.glob("*.toml")), ids=lambda p: p.name)
def test_each_file_declares_its_domain_and_holds_only_that_domain(path):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data["domain"] == path.stem
    for entry in data["tools"]:
        assert re.fullmatch(rf"{path.stem}:[a-z][a-z_]*", entry["name"]), entry["name"]


# ---------------------------------------------------------------------------------------------
# Each tool
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
def test_tool_has_every_descriptor_field(tool):
    for field in REQUIRED_TEXT:
        assert getattr(tool, field).strip(), f"{tool.name}: empty {field}"
    assert 6 <= len(tool.routing_hints) <= 10, f"{tool.name}: {len(tool.routing_hints)} routing hints"
    assert tool.examples_good, f"{tool.name}: no examples_good"
    assert tool.examples_bad, f"{tool.name}: no examples_bad"
    for example in (*tool.examples_good, *tool.examples_bad):
        assert example.text and example.rationale, f"{tool.name}: example without text or rationale"
    assert all(" " not in k.strip() for k in tool.keywords), f"{tool.name}: keywords are single words"


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
def test_tool_parameters_are_a_draft_2020_12_object_schema(tool):
    jsonschema.Draft202012Validator.check_schema(tool.parameters)
    assert tool.parameters["type"] == "object"
    assert isinstance(tool.parameters.get("properties"), dict)
    assert set(tool.parameters.get("required", [])) <= set(tool.parameters["properties"])


FORMATS = jsonschema.FormatChecker()


@FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    """RFC 3339 date-time with an offset (jsonschema checks it only when rfc3339-validator is installed)."""
    if not isinstance(value, str):
        return True
    return datetime.fromisoformat(value.replace("Z", "+00:00")).tzinfo is not None


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
def test_tool_good_examples_validate_against_its_schema(tool):
    validator = jsonschema.Draft202012Validator(tool.parameters, format_checker=FORMATS)
    for example in tool.examples_good:
        errors = [e.message for e in validator.iter_errors(dict(example.arguments))]
        assert not errors, f"{tool.name}: {example.text!r}: {errors}"


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
def test_tool_bad_examples_name_another_tool_in_their_rationale(tool):
    for example in tool.examples_bad:
        named = set(re.findall(r"\b[a-z]+:[a-z_]+\b", example.rationale)) & set(CATALOG.names)
        figurative = "no tool" in example.rationale.lower()
        assert named - {tool.name} or figurative, f"{tool.name}: {example.rationale!r}"


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
def test_tool_routing_hints_are_bilingual(tool):
    assert any(_is_german(h) for h in tool.routing_hints), f"{tool.name}: no German hint"
    assert any(_is_english(h) for h in tool.routing_hints), f"{tool.name}: no English hint"


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
def test_tool_routing_hints_are_never_a_bare_cross_domain_verb(tool):
    for hint in tool.routing_hints:
        words = hint.lower().split()
        assert len(words) >= 2, f"{tool.name}: single-word hint {hint!r}"
        assert not set(words) <= BARE_VERBS | {"it", "that", "this", "me"}, f"{tool.name}: bare hint {hint!r}"


def test_routing_hints_are_unique_across_the_catalogue():
    seen: dict[str, str] = {}
    for tool in TOOLS:
        for hint in tool.routing_hints:
            key = hint.lower()
            assert key not in seen, f"{hint!r} in both {seen[key]} and {tool.name}"
            seen[key] = tool.name


# ---------------------------------------------------------------------------------------------
# The loader's errors (whole one-line messages: messages are API)
# ---------------------------------------------------------------------------------------------

GOOD_TOOL = 'name = "x:a"\nshort_description = "A tool."\n'


def _load_error(path: Path) -> str:
    with pytest.raises(CatalogError) as info:
        load(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_load_bad_toml_names_the_file_and_the_position(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('domain = "x"\n[[tools]]\nname = "x:a\n', encoding="utf-8")
    assert _load_error(path) == f"{path}: not valid TOML (Illegal character '\\n' (at line 3, column 12))"


def test_load_missing_name_names_the_tool_entry(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('domain = "x"\n[[tools]]\n' + GOOD_TOOL + '[[tools]]\nshort_description = "B."\n', encoding="utf-8")
    assert _load_error(path) == f"{path}: tools[1]: missing required field 'name'"


def test_load_missing_short_description_names_the_tool_entry(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('domain = "x"\n[[tools]]\nname = "x:a"\nwhen_to_use = "Always."\n', encoding="utf-8")
    assert _load_error(path) == f"{path}: tools[0]: missing required field 'short_description'"


def test_load_duplicate_names_across_files_names_both_files(tmp_path):
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text("[[tools]]\n" + GOOD_TOOL + '[[tools]]\nname = "x:b"\nshort_description = "B."\n', encoding="utf-8")
    second.write_text("[[tools]]\n" + GOOD_TOOL, encoding="utf-8")
    assert _load_error(tmp_path) == (
        f"{second}: tools[0].name: duplicate tool name 'x:a' (first defined in {first})"
    )


def test_load_parameters_not_a_json_schema_names_the_field(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('domain = "x"\n[[tools]]\n' + GOOD_TOOL + "[tools.parameters]\ntype = 5\n", encoding="utf-8")
    assert _load_error(path) == (
        f"{path}: tools[0].parameters: #/type: not a JSON Schema: 5 is not valid under any of the given schemas"
    )


def test_load_tool_outside_the_files_domain_names_the_tool(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('domain = "y"\n[[tools]]\n' + GOOD_TOOL, encoding="utf-8")
    assert _load_error(path) == f"{path}: tools[0].name: tool 'x:a' is not in this file's domain; expected 'y:<verb>'"


def test_every_demo_schema_compiles_to_a_strict_grammar():
    """The demo catalogue must be callable under the grammar: no keyword the compiler refuses."""
    from eris_lab.grammar import compile as compile_grammar
    from eris_lab.offer import Offer

    catalog = load()
    roster = Offer.given(catalog.names, kind="full_roster", reason="the whole demo roster")
    grammar = compile_grammar(roster, catalog)
    assert grammar.names == catalog.names and not grammar.warnings
