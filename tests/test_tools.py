"""The demo executors (eris_lab.tools), run through execution.execute: clock, agenda round trip,
vault sandbox, calc safety, and every descriptor example on its real executor."""

from __future__ import annotations

import os

import pytest

from eris_lab.catalog import Catalog
from eris_lab.execution import Session, execute
from eris_lab.parse import Call
from test_execution import CATALOG, FIXED, STR, _tool, run


@pytest.fixture
def session(tmp_path):
    return Session(tmp_path / "session", timezone="Europe/Berlin", clock=lambda: FIXED)


# ---------------------------------------------------------------------------------------------
# clock
# ---------------------------------------------------------------------------------------------


def test_clock_now_in_a_time_zone(session):
    assert run(session, "clock:now", {"timezone": "Asia/Tokyo"}).data == {
        "timezone": "Asia/Tokyo", "iso": "2026-11-29T20:00:00+09:00", "weekday": "Sunday", "utc_offset": "+0900"}
    assert run(session, "clock:now", {}).data["iso"] == "2026-11-29T12:00:00+01:00"  # the session's zone


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../../etc/passwd", "/etc/localtime"])
def test_clock_now_unknown_zone_is_an_error(session, zone):
    result = run(session, "clock:now", {"timezone": zone})
    assert result.status == "error" and result.recoverable
    assert result.error == f"unknown time zone {zone!r}; expected an IANA name such as 'Europe/Berlin'"


# ---------------------------------------------------------------------------------------------
# agenda
# ---------------------------------------------------------------------------------------------


def test_agenda_round_trip(session):
    added = run(session, "agenda:remind_at", {"text": "call mum", "at": "2026-11-30T10:00:00"}).data["added"]
    assert added["due"] == "2026-11-30T10:00:00+01:00" and added["kind"] == "reminder"
    run(session, "agenda:remind_self", {"text": "buy stamps", "tags": ["post"]})
    run(session, "agenda:remind_self", {"text": "renew passport"})
    listed = run(session, "agenda:list", {}).data
    assert [i["title"] for i in listed["items"]] == ["call mum", "buy stamps", "renew passport"]
    pushed = run(session, "agenda:push", {"item": "call mum", "until": {"delay_minutes": 90}}).data["pushed"]
    assert pushed["due"] == "2026-11-30T11:30:00+01:00"
    done = run(session, "agenda:complete", {"item": "Buy Stamps!", "note": "done at the post office"}).data
    assert done["completed"]["status"] == "done"
    assert [i["title"] for i in run(session, "agenda:list", {"status": "done"}).data["items"]] == ["buy stamps"]
    removed = run(session, "agenda:remove", {"item": f"#{added['id']}"}).data["removed"]
    assert removed["title"] == "call mum"
    assert [i["title"] for i in run(session, "agenda:list", {"status": "all"}).data["items"]] == [
        "buy stamps", "renew passport"]
    # a second session on the same folder sees the same database
    again = Session(session.folder, clock=lambda: FIXED)
    assert run(again, "agenda:list", {}).data["count"] == 1


def test_agenda_due_time_that_does_not_parse_is_not_guessed(session):
    result = run(session, "agenda:remind_at", {"text": "x", "at": "tomorrow-ish"})
    assert result.error == "at: cannot read 'tomorrow-ish' as an ISO 8601 date-time; nothing was guessed"
    assert run(session, "agenda:list", {}).data["count"] == 0


def test_agenda_unknown_item_lists_what_exists(session):
    run(session, "agenda:remind_self", {"text": "water the plants"})
    result = run(session, "agenda:complete", {"item": "file taxes"})
    assert result.error == "no agenda item matches 'file taxes'; items: 'water the plants'"


def test_agenda_ambiguous_item_asks(session):
    run(session, "agenda:remind_self", {"text": "call the bank"})
    run(session, "agenda:remind_self", {"text": "call the dentist"})
    result = run(session, "agenda:remove", {"item": "call"})
    assert result.error.startswith("'call' matches more than one item or only loosely; ask the user which:")


# ---------------------------------------------------------------------------------------------
# vault
# ---------------------------------------------------------------------------------------------


def test_vault_write_read_list(session):
    assert run(session, "vault:write", {"path": "notes/todo.md", "content": "buy milk", "mode": "create"}).data == {
        "path": "notes/todo.md", "mode": "create", "bytes": 8, "size": 8}
    run(session, "vault:write", {"path": "notes/todo.md", "content": "\neggs"})  # default mode: append
    assert run(session, "vault:read", {"path": "notes/todo.md"}).data["content"] == "buy milk\neggs"
    assert run(session, "vault:list", {}).data == {
        "folder": ".", "entries": [{"name": "notes", "type": "folder"}], "complete": True}
    assert run(session, "vault:list", {"folder": "notes"}).data["entries"] == [
        {"name": "todo.md", "type": "file", "size": 13}]
    assert [e["name"] for e in run(session, "vault:list", {"recursive": True}).data["entries"]] == [
        "notes", "notes/todo.md"]


def test_vault_write_modes(session):
    run(session, "vault:write", {"path": "a.md", "content": "one"})
    assert run(session, "vault:write", {"path": "a.md", "content": "x", "mode": "create"}).error == (
        "'a.md' exists already; use mode 'append' or 'overwrite'")
    run(session, "vault:write", {"path": "a.md", "content": "two", "mode": "overwrite"})
    assert (session.vault / "a.md").read_text() == "two"


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../secret.txt", "'..' would leave the vault"),
        ("notes/../../secret.txt", "'..' would leave the vault"),
        ("/etc/passwd", "absolute paths are not allowed; use a path inside the vault"),
        ("~/.ssh/id_rsa", "absolute paths are not allowed; use a path inside the vault"),
        ("C:\\Windows\\win.ini", "absolute paths are not allowed; use a path inside the vault"),
        ("..\\secret.txt", "'..' would leave the vault"),
    ],
)
def test_vault_refuses_path_escapes(session, path, why):
    secret = session.folder / "secret.txt"
    secret.write_text("top secret")
    for name, args in [("vault:read", {"path": path}), ("vault:write", {"path": path, "content": "pwned"})]:
        result = run(session, name, args)
        assert result.error == f"path: refused {path!r}: {why}"
    assert secret.read_text() == "top secret"


def test_vault_refuses_symlinks_escaping(session, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    session.vault.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, session.vault / "link")
    os.symlink(outside / "secret.txt", session.vault / "file_link")
    assert run(session, "vault:read", {"path": "link/secret.txt"}).error == (
        "path: refused 'link/secret.txt': link is a symlink")
    assert run(session, "vault:read", {"path": "file_link"}).error == "path: refused 'file_link': file_link is a symlink"
    assert run(session, "vault:write", {"path": "link/new.txt", "content": "x"}).status == "error"
    assert not (outside / "new.txt").exists()
    assert run(session, "vault:list", {"path": "link"}).status == "error"


def test_vault_missing_file_is_an_error(session):
    assert run(session, "vault:read", {"path": "nope.txt"}).error == "no file 'nope.txt' in the vault"


# ---------------------------------------------------------------------------------------------
# calc
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "result"),
    [("(2 + 3) * 4", 20), ("2**10", 1024), ("7 / 2", 3.5), ("sqrt(16) + pi - pi", 4), ("-3 % 5", 2),
     ("12 × 7", 84), ("max(1, 9, 3)", 9), ("round(2.567, 2)", 2.57), ("1/3", 0.333333)],
)
def test_calc_evaluate(session, expression, result):
    assert run(session, "calc:evaluate", {"expression": expression}).data["result"] == result


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("__import__('os').system('echo pwned')", "not allowed in an arithmetic expression: Call;"),
        ("exec('1')", "not allowed in an arithmetic expression: Call;"),
        ("(1).__class__", "not allowed in an arithmetic expression: Attribute"),
        ("[x for x in range(10**9)]", "not allowed in an arithmetic expression: ListComp"),
        ("'a' * 10", "not allowed in an arithmetic expression: Constant"),
        ("9**9**9", "the power is too large to compute"),
        ("2**100000", "the power is too large to compute"),
        ("1/0", "division by zero"),
        ("2 ^ 8", "'^' is not a power here; write ** (2**8)"),
        ("(-8) ** 0.5", "the result is not a real number"),
        ("sqrt(-1)", "sqrt: math domain error"),
        ("1 +", "expression: cannot read '1 +' as arithmetic"),
    ],
)
def test_calc_evaluate_refuses_unsafe_or_bad_input(session, expression, error):
    result = run(session, "calc:evaluate", {"expression": expression})
    assert result.status == "error"
    assert result.error.startswith(error)


def test_calc_evaluate_precision(session):
    assert run(session, "calc:evaluate", {"expression": "1200 / 7", "precision": 2}).data["result"] == 171.43


def test_calc_evaluate_big_multiplication_is_bounded(session):
    result = run(session, "calc:evaluate", {"expression": "*".join(["(10**1000)"] * 5)})
    assert result.error == "the result is too large (more than 4096 bits)"


@pytest.mark.parametrize(
    ("value", "src", "dst", "result"),
    [(10, "km", "miles", 6.2137119224), (100, "celsius", "fahrenheit", 212.0), (0, "K", "°C", -273.15),
     (1, "GiB", "MB", 1073.741824), (3, "feet", "m", 0.9144), (1, "gallon", "l", 3.785411784),
     (350, "degF", "degC", 176.6666666667)],
)
def test_calc_convert(session, value, src, dst, result):
    assert run(session, "calc:convert", {"value": value, "from": src, "to": dst}).data["result"] == pytest.approx(result)


def test_calc_convert_incompatible_units(session):
    assert run(session, "calc:convert", {"value": 1, "from": "kg", "to": "km"}).error == (
        "cannot convert 'kg' (mass) to 'km' (length)")
    assert run(session, "calc:convert", {"value": 1, "from": "celsius", "to": "km"}).error == (
        "cannot convert 'celsius' to 'km': only temperatures convert to temperatures")


def test_calc_convert_descriptor_key_names(session):
    result = execute(Call(name="calc:convert", arguments={"value": 10, "from_unit": "km", "to_unit": "mi"}),
                     ["calc:convert"], Catalog([_tool("calc:convert", additional=True)]), session=session)
    assert result.data["result"] == pytest.approx(6.2137119224)


# ---------------------------------------------------------------------------------------------
# The demo descriptors, when present: every good example runs on its real executor
# ---------------------------------------------------------------------------------------------


def _demo_examples():
    from conftest import ROOT

    from eris_lab.catalog import load
    from eris_lab.tools import EXECUTORS

    folder = ROOT / "descriptors"
    if not folder.is_dir():
        return []
    catalog = load(folder)
    return [(catalog, tool.name, ex.arguments) for tool in catalog if tool.name in EXECUTORS
            for ex in tool.examples_good]


@pytest.mark.skipif(not _demo_examples(), reason="no descriptors/ folder in this checkout yet")
@pytest.mark.parametrize("catalog,name,arguments", _demo_examples() or [(None, "", {})])
def test_demo_example_runs_on_its_executor(tmp_path, catalog, name, arguments):
    session = Session(tmp_path, clock=lambda: FIXED)
    session.vault.mkdir(parents=True, exist_ok=True)
    (session.vault / "projects").mkdir()
    for item in ("buy stamps", "renew passport", "pay the electricity bill", "Steuererklärung", "Blumen gießen",
                 "Zahnarzt anrufen"):
        execute(Call(name="agenda:remind_self", arguments={"text": item}), ["agenda:remind_self"],
                Catalog([_tool("agenda:remind_self", {"text": STR}, ["text"])]), session=session)
    for path in ("projects/garden.md", "einkaufsliste.md"):
        (session.vault / path).write_text("x")
    result = execute(Call(name=name, arguments=arguments), [name], catalog, session=session)
    assert result.status == "ok", result.text


# ---------------------------------------------------------------------------------------------
# Fuzz: calc never crashes (only ToolError text) and never runs for long
# ---------------------------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_CALC_TEXT = st.text(alphabet="0123456789.+-*/%()e ,^" + "sqrtlogpimaxround", max_size=60)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(expression=_CALC_TEXT)
def test_calc_evaluate_fuzz_only_tool_errors(tmp_path, expression):
    session = Session(tmp_path, clock=lambda: FIXED)
    result = execute(Call(name="calc:evaluate", arguments={"expression": expression or "0"}), ["calc:evaluate"],
                     CATALOG, session=session, timeout_s=5)
    assert result.status in ("ok", "error", "invalid"), result.text
    assert "the tool failed" not in result.text
