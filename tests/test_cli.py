"""The command line: route and decide, JSON contract, one-line errors with exit status 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eris_lab.cli import main

from conftest import load_cases

REGISTRY = load_cases("policy_cases.json")["registry"]


@pytest.fixture
def catalog_file(tmp_path):
    tools = [{"name": n, "description": n.replace(":", " ").replace("_", " ")} for n in REGISTRY]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools))
    return str(path)


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_decide_json_contract(capsys, catalog_file):
    status, out, err = run(capsys, "decide", "--text", "please read the vault note at notes/today.md",
                           "--hits", '[["vault:read", 0.72]]', "--catalog", catalog_file, "--json")
    assert status == 0, err
    record = json.loads(out)
    assert record["decision"]["rule"] == "SINGLE_STRONG_HIT"
    assert record["decision"]["kind"] == "subset" and record["decision"]["names"] == ["vault:read"]
    assert record["offered"] == ["vault:read"]


def test_decide_fallback_flag_and_object_hits(capsys, catalog_file):
    status, out, _ = run(capsys, "decide", "--text", "please remove that thing from earlier", "--hits",
                         '[{"name": "doc:ingest", "score": 0.505}]', "--fallback", "domain_cluster",
                         "--catalog", catalog_file, "--json")
    record = json.loads(out)
    assert status == 0 and record["decision"]["rule"] == "UNSURE_DOMAIN_CLUSTER"
    assert record["offered"][0] == "doc:ingest" and "doc:list" in record["offered"]


def test_decide_readable_table(capsys, catalog_file):
    status, out, _ = run(capsys, "decide", "--text", "what is the weather forecast for Berlin now", "--hits",
                         '[["weather:current", 0.70], ["weather:forecast", 0.69]]', "--catalog", catalog_file)
    assert status == 0
    assert "rule:   RANKED_SUBSET (subset)" in out and "weather:forecast  0.690" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["decide", "--text", "x", "--hits", "[oops"], "eris-lab: error: --hits: not valid JSON"),
        (["decide", "--text", "x", "--hits", '{"a": 1}'], "eris-lab: error: --hits: expected a JSON list of hits, got dict"),
        (["decide", "--text", "x", "--hits", '[["nope:x", 0.9]]'], "eris-lab: error: --hits/--recent: unknown tool 'nope:x'"),
        (["decide", "--text", "x", "--hits", '[["clock:now", "high"]]'], "eris-lab: error: --hits[0]: expected a string name"),
        (["route", "hello", "--catalog", "/nonexistent/tools.json"], "eris-lab: error: /nonexistent/tools.json: no such file or folder"),
        (["route", "hello", "--knobs", "/nonexistent.toml"], "eris-lab: error: /nonexistent.toml: no such file"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, catalog_file, argv, message):
    if "--catalog" not in argv:
        argv = argv + ["--catalog", catalog_file]
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert err.strip().splitlines()[-1].startswith(message)
    assert "Traceback" not in err


def test_usage_error_exits_2(capsys):
    status, _, err = run(capsys, "route")
    assert status == 2 and "eris-lab: error:" in err


def test_route_empty_catalogue_is_a_clear_error(capsys, tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("[]")
    status, _, err = run(capsys, "route", "what time is it", "--catalog", str(path))
    assert status == 2
    assert err.strip() == f"eris-lab: error: {path}: the catalogue has no tools; a router needs at least one"


def test_route_json_with_real_embedder(capsys, catalog_file):
    status, out, err = run(capsys, "route", "Open https://example.org and summarise it", "--catalog", catalog_file,
                           "--json")
    assert status == 0, err
    record = json.loads(out)
    assert record["hits"][0] == {"name": "web:fetch", "score": 1.0}
    assert record["offered"][0] == "web:fetch" and "web:find" in record["offered"]
    assert set(record["timings_ms"]) >= {"embed", "score", "policy", "total"}


def test_route_greeting_offers_nothing(capsys, catalog_file):
    status, out, _ = run(capsys, "route", "hi", "--catalog", catalog_file, "--json")
    record = json.loads(out)
    assert status == 0 and record["offered"] == [] and record["decision"]["rule"] == "CONVERSATIONAL"


def test_route_unknown_recent_tool(capsys, catalog_file):
    status, _, err = run(capsys, "route", "delete that email", "--recent", "mail:chek", "--catalog", catalog_file)
    assert status == 2 and "--recent: unknown tool 'mail:chek'" in err


def test_eval_help_names_every_registered_strategy_and_suite():
    """The parser is built without importing the strategies (a fast start); its help must still
    name exactly the registry's strategies and the loader's suites."""
    import argparse
    import re

    from eris_lab.cli import main_parser
    from eris_lab.eval.datasets import SUITES
    from eris_lab.strategies import STRATEGIES

    sub = next(a for a in main_parser()._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub.choices["eval"]._actions}
    assert set(re.match(r"(.*?); parameters", helps["strategy"]).group(1).split(", ")) == set(STRATEGIES)
    assert set(re.match(r"(.*?), or a JSONL file", helps["suite"]).group(1).split(", ")) == set(SUITES)


def test_every_benchmark_is_a_subcommand_with_the_one_error_format(capsys):
    from eris_lab.bench import BENCHES

    assert main(["bench", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("eris-lab: error: argument NAME: invalid choice: 'nope'")
    for name in BENCHES:  # each module is there, with a main that parses its own flags
        assert main(["bench", name, "--help"]) == 0
        assert capsys.readouterr().out.startswith(f"usage: eris-lab bench {name} ")
    assert main(["bench", "route", "--sizes", "10,x"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "eris-lab: error: argument --sizes: expected comma-separated tool counts >= 1, got '10,x'")


def test_route_unknown_failed_tool(capsys, catalog_file):
    status, _, err = run(capsys, "route", "I'm in Leeds", "--failed", "weather:curent", "--catalog", catalog_file)
    assert status == 2 and "--failed: unknown tool 'weather:curent'" in err and "Traceback" not in err


@pytest.mark.parametrize("reply", ["I'm in Leeds", "Leeds", "in Paris please", "use Berlin"])
def test_route_failed_brings_the_failed_tool_back_for_a_short_reply(capsys, catalog_file, reply):
    status, out, err = run(capsys, "route", reply, "--failed", "weather:current", "--catalog", catalog_file, "--json")
    record = json.loads(out)
    assert status == 0, err
    assert record["offered"][0] == "weather:current" and record["decision"]["kind"] != "full_roster"
    assert record["decision"]["rule"] == "FAILED_TOOL_RETRY"


def test_route_without_failed_a_short_reply_stays_conversation(capsys, catalog_file):
    status, out, _ = run(capsys, "route", "I'm in Leeds", "--catalog", catalog_file, "--json")
    assert status == 0 and json.loads(out)["decision"]["rule"] == "CONVERSATIONAL"


def test_route_previous_makes_a_short_follow_up_a_request(capsys, catalog_file):
    status, out, _ = run(capsys, "route", "and tomorrow?", "--previous", "what's the weather in Berlin",
                         "--catalog", catalog_file, "--json")
    record = json.loads(out)
    assert status == 0 and record["decision"]["kind"] != "conversational"
    assert any(n.startswith("weather:") for n in record["offered"]) and "previous turn" in record["guard"]


def test_route_remove_it_right_after_a_listing_widens_on_that_domain(capsys, catalog_file):
    status, out, _ = run(capsys, "route", "please remove it", "--recent", "agenda:list", "--catalog", catalog_file,
                         "--json")
    record = json.loads(out)
    assert status == 0 and record["offered"][0] == "agenda:remove" and len(record["offered"]) > 1


@pytest.mark.parametrize("text", ["明日の朝7時にアラームをセットしてください", "明天北京的天气怎么样",
                                  "내일 아침 7시에 알람 맞춰줘", "Поставь будильник на семь утра", "天気は？"])
def test_route_requests_in_other_scripts_are_never_conversation(capsys, catalog_file, text):
    # bad input row 6: a tool or the roster, never nothing for a request
    status, out, _ = run(capsys, "route", text, "--catalog", catalog_file, "--json")
    record = json.loads(out)
    assert status == 0 and record["decision"]["rule"] != "CONVERSATIONAL" and record["offered"]


@pytest.mark.parametrize("text", ["こんにちは！", "谢谢", "안녕하세요", "Спасибо!"])
def test_route_greetings_in_other_scripts_stay_conversation(capsys, catalog_file, text):
    status, out, _ = run(capsys, "route", text, "--catalog", catalog_file, "--json")
    assert status == 0 and json.loads(out)["decision"]["rule"] == "CONVERSATIONAL"


# -- calibrated knobs by default, --knobs reference, eris-lab calibrate (issue 18) -----------------


def test_calibrate_prints_fitted_knobs_and_writes_a_loadable_file(capsys, tmp_path):
    from eris_lab.knobs import Knobs

    out_file = tmp_path / "knobs.toml"
    status, out, _ = run(capsys, "calibrate", "--out", str(out_file), "--json")
    record = json.loads(out)
    assert status == 0 and record["out"] == str(out_file)
    prov = record["provenance"]
    assert prov["n_tools"] == 56 and prov["promised_coverage"] == 0.95 and prov["n_pseudo_queries"] >= 100
    knobs = Knobs.load(out_file)
    assert knobs.unsure_fallback == "ranked" and knobs.widen_k == record["knobs"]["widen_k"]
    assert knobs.notes["calibration"]["catalog_fingerprint"] == prov["catalog_fingerprint"]


def test_calibrate_says_its_promise_and_when_the_cap_lowered_it(capsys, monkeypatch):
    from eris_lab import calibration
    from eris_lab.knobs import Knobs

    status, out, _ = run(capsys, "calibrate")
    assert status == 0 and "promised coverage: 0.950 for messages like the calibration ones\n" in out
    capped = {"method": "label-free", "n_tools": 900, "promised_coverage": 0.756, "target_coverage": 0.95,
              "widen_k_needed": 71}
    monkeypatch.setattr(calibration, "calibrated_knobs",
                        lambda *a, **k: Knobs(widen_k=16, notes={"calibration": capped}))
    status, out, _ = run(capsys, "calibrate")
    assert status == 0 and ("promised coverage: 0.756 for messages like the calibration ones (target 0.950: "
                            "widen_k would need 71 seats)") in out


@pytest.mark.parametrize("argv, where", [
    (["--alpha", "1.5"], "--alpha"), (["--alpha", "0"], "--alpha"), (["--out", "."], "--out"),
    (["--suite", "live_multiple"], "--suite"),  # per-case functions: no one catalogue to calibrate
    (["--suite", "bfcl-pooled", "--catalog", "descriptors"], "--catalog"),
])
def test_calibrate_bad_flags_are_one_line(capsys, argv, where):
    status, out, err = run(capsys, "calibrate", *argv)
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1 and where in err


def test_calibrate_on_a_labelled_suite_records_it_and_writes_loadable_knobs(capsys, tmp_path):
    from eris_lab.knobs import Knobs

    out_file = tmp_path / "labelled.toml"
    data = Path(__file__).parent / "data"
    status, out, _ = run(capsys, "calibrate", "--suite", str(data / "mini_queries.jsonl"), "--catalog",
                         str(data / "mini_catalog.toml"), "--alpha", "0.2", "--out", str(out_file), "--json")
    prov = json.loads(out)["provenance"]
    needing = sum(bool(json.loads(line)["gold"]) for line in (data / "mini_queries.jsonl").read_text().splitlines())
    assert status == 0 and "labelled queries" in prov["method"]
    assert prov["n_labelled_queries"] == needing == 9 and prov["promised_coverage"] == 0.8
    assert Knobs.load(out_file).notes["calibration"]["n_labelled_queries"] == needing


def test_route_defaults_to_calibrated_knobs_and_reference_is_a_flag_away(capsys):
    text = "please read notes/today.md"  # bad input row 29: the README's own example
    _, out, _ = run(capsys, "route", text, "--json")
    calibrated = json.loads(out)
    _, out, _ = run(capsys, "route", text, "--knobs", "reference", "--json")
    reference = json.loads(out)
    assert "vault:read" in calibrated["offered"] and len(calibrated["offered"]) <= 16
    assert calibrated["decision"]["kind"] != "full_roster"
    assert reference["decision"]["rule"] == "EMPTY_AFTER_POLICY" and len(reference["offered"]) == 56


@pytest.mark.parametrize("text", [
    "Here is some background about my week, which was long and tiring. " * 60 + "Please set an alarm for 7 am tomorrow.",
    "lorem ipsum dolor sit amet " * 160 + "please set an alarm for 7 am",  # past the 4,000-character cut
])
def test_a_request_after_a_long_pasted_text_is_offered(capsys, text):
    _, out, _ = run(capsys, "route", text, "--json")
    routed = json.loads(out)
    assert "clock:alarm" in routed["offered"] and len(routed["offered"]) <= 16, routed["decision"]


@pytest.mark.parametrize("text", [
    "send an email to bob@example.com saying lunch is at noon",  # bad input row 29
    "email alice@example.org that the meeting moved to 3pm",  # its address pulled the calendar
    "write to dave.smith@example.net that I am sick today",
    "tell anna@firm.de that the invoice is paid",
])
def test_a_message_to_an_email_address_offers_mail_write(capsys, text):
    _, out, _ = run(capsys, "route", text, "--json")
    routed = json.loads(out)
    assert "mail:write" in routed["offered"][:4] and routed["decision"]["kind"] != "full_roster", routed["decision"]


@pytest.mark.parametrize("text", [
    "check my email, add a calendar entry for the dentist on Friday at 3pm, set an alarm at 7, "
    "what's the weather in Berlin, convert 100 dollars to euros, and read notes/today.md",
    # a variant: "add a calendar entry" scores calendar:list a hair above calendar:create here
    "check my email, add a calendar entry for the dentist on Friday at 3, set an alarm at 7, "
    "what's the weather in Berlin, convert 100 dollars to euros and read notes/today.md",
])
def test_six_requests_in_one_message_offer_each_requested_tool(capsys, text):
    # bad input row 30: was a RANKED_SUBSET of 3 (calendar:create, mail:write, calendar:list)
    _, out, _ = run(capsys, "route", text, "--json")
    routed = json.loads(out)
    offered = set(routed["offered"])
    assert {"mail:check", "calendar:create", "clock:alarm", "calc:convert", "vault:read"} <= offered
    assert offered & {"weather:current", "weather:forecast"} and len(offered) <= 16


def test_decide_judges_with_reference_knobs_unless_given(capsys, catalog_file, tmp_path):
    hits = json.dumps([["weather:current", 0.52]])
    _, out, _ = run(capsys, "decide", "--text", "is it cold outside", "--hits", hits, "--catalog", catalog_file,
                    "--json")
    assert json.loads(out)["decision"]["rule"] == "UNSURE_FULL_ROSTER"
    _, out, _ = run(capsys, "decide", "--text", "is it cold outside", "--hits", hits, "--catalog", catalog_file,
                    "--fallback", "ranked", "--json")
    assert json.loads(out)["decision"]["rule"] in ("UNSURE_RANKED",)


def test_route_text_says_its_total_is_the_route_alone(capsys):
    """The timings line names the route's own total apart from a new process's set-up (a new user
    read "total 46 ms" beside "model_load 15,400 ms" as the whole run, 2026-12-06)."""
    from eris_lab.cli import _print_routing

    _print_routing({"text": "hi", "guard": "", "hits": [], "decision": {"rule": "CONVERSATIONAL", "kind": "conversational",
                  "names": [], "reason": "r"}, "offered": [], "timings_ms": {"model_load": 400.0, "total": 12.5}})
    line = capsys.readouterr().out.splitlines()[-1]
    assert line == "timings: model_load 400.0 ms, route total 12.5 ms"


def test_route_table_says_what_added_a_tool_after_the_rules(capsys):
    """A tool the rules did not choose names what added it (memory, added, web question), not
    "policy": the seated web search of an information question read as the policy's own pick."""
    from eris_lab.cli import _print_routing

    _print_routing({"text": "is the new Zelda game out yet?", "guard": "", "hits": [{"name": "clock:now", "score": 0.2}],
                    "decision": {"rule": "RANKED_SUBSET", "kind": "subset", "names": ["clock:now", "clock:alarm", "web:search"],
                                 "reason": "r", "sources": [["web:search", "web question"]]},
                    "offered": ["clock:now", "clock:alarm", "web:search"], "timings_ms": {}})
    why = {line.split()[0]: re.split(r"\s{2,}", line.strip())[-1] for line in capsys.readouterr().out.splitlines()
           if line.startswith(("clock:", "web:"))}
    assert why == {"clock:now": "hit", "clock:alarm": "policy", "web:search": "web question"}
