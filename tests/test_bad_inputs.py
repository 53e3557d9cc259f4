"""Never fail open at the command line, in the executors and in the MCP server (issue 13).

Every row of ``tests/cases/bad_inputs.md`` that is not about the grammar compiler, the parser or
routing quality is a test here (``ROWS`` maps each row to its tests; a test checks the mapping).
Each kind is tested with several variants besides the handed one: bad user input is one line on
stderr, ``eris-lab: error: ...`` naming the input, exit status 2, never a traceback.
"""

from __future__ import annotations

import gc
import json
import os
import re
import stat
import sys
import time
from pathlib import Path

import pytest
from conftest import CASES, ROOT

from eris_lab.cli import main, printable

#: Rows of bad_inputs.md this file owns -> the tests that cover them.
ROWS = {
    1: ["test_calc_round_with_huge_digits_is_answered_at_once", "test_mcp_server_answers_while_a_tool_runs"],
    12: ["test_bad_input_is_one_line_naming_it"], 13: ["test_bad_input_is_one_line_naming_it"],
    14: ["test_bad_input_is_one_line_naming_it"], 17: ["test_bad_input_is_one_line_naming_it"],
    18: ["test_bad_input_is_one_line_naming_it"], 19: ["test_bad_input_is_one_line_naming_it"],
    20: ["test_bad_input_is_one_line_naming_it"], 21: ["test_bad_input_is_one_line_naming_it"],
    23: ["test_tune_out_file_gets_the_umask_mode"], 24: ["test_bad_input_is_one_line_naming_it"],
    25: ["test_bad_input_is_one_line_naming_it"], 26: ["test_bad_input_is_one_line_naming_it"],
    33: ["test_bad_input_is_one_line_naming_it"], 34: ["test_bad_input_is_one_line_naming_it"],
    35: ["test_meta_tools_check_arguments_against_their_schema", "test_tool_route_checks_its_schema_and_names_a_rule"],
    36: ["test_vault_refuses_a_planted_hard_link"],
    39: ["test_control_characters_in_tool_names_are_escaped_in_the_table"],
    40: ["test_bad_input_is_one_line_naming_it"], 41: ["test_bad_input_is_one_line_naming_it"],
    42: ["test_bad_input_is_one_line_naming_it"], 43: ["test_bad_input_is_one_line_naming_it"],
    44: ["test_bad_input_is_one_line_naming_it"], 47: ["test_bad_input_is_one_line_naming_it"],
    48: ["test_bad_input_is_one_line_naming_it"], 49: ["test_bad_input_is_one_line_naming_it"],
    50: ["test_bad_input_is_one_line_naming_it"], 51: ["test_bad_input_is_one_line_naming_it"],
    52: ["test_bad_input_is_one_line_naming_it"], 53: ["test_bad_input_is_one_line_naming_it"],
    54: ["test_bad_input_is_one_line_naming_it"], 55: ["test_bad_input_is_one_line_naming_it"],
    45: ["test_tool_route_checks_its_schema_and_names_a_rule"],
    56: ["test_bad_input_is_one_line_naming_it"], 57: ["test_stdin_is_capped_and_odd_strings_are_written_as_valid_unicode"],
    58: ["test_a_full_disk_is_one_line"], 59: ["test_bad_input_is_one_line_naming_it"],
    60: ["test_bad_input_is_one_line_naming_it", "test_an_integer_bound_past_int64_is_an_open_side"],
    61: ["test_bad_input_is_one_line_naming_it"], 62: ["test_bad_input_is_one_line_naming_it"],
    63: ["test_control_characters_in_the_prompt_table_are_escaped"],
    46: ["test_temporary_sessions_are_removed"],
    64: ["test_bad_input_is_one_line_naming_it", "test_a_pipe_with_a_writer_is_read"],
    65: ["test_bad_input_is_one_line_naming_it"], 66: ["test_bad_input_is_one_line_naming_it"],
    67: ["test_bad_input_is_one_line_naming_it"], 68: ["test_bad_input_is_one_line_naming_it"],
    69: ["test_bad_input_is_one_line_naming_it", "test_a_recursive_schema_with_a_base_case_loads"],
    70: ["test_bad_input_is_one_line_naming_it"],
    71: ["test_stdin_is_capped_and_odd_strings_are_written_as_valid_unicode"],
    72: ["test_out_on_a_fifo_is_one_line_and_leaves_it"],
}

TOOLS = [{"name": "clock:alarm", "description": "Set an alarm at a time.",
          "parameters": {"type": "object", "properties": {"time": {"type": "string"}}}},
         {"name": "clock:now", "description": "The current time."},
         {"name": "weather:forecast", "description": "The weather forecast for a city."}]


def test_every_row_of_ours_is_a_test_and_in_the_case_file():
    rows = {int(m) for m in re.findall(r"(?m)^\| (\d+) \|", (CASES / "bad_inputs.md").read_text(encoding="utf-8"))}
    assert set(ROWS) <= rows
    defined = {name for name in globals() if name.startswith("test_")}
    for row, tests in ROWS.items():
        assert tests and set(tests) <= defined, row


# ---------------------------------------------------------------------------------------------
# Files the bad inputs are made of
# ---------------------------------------------------------------------------------------------


def _nested_schema(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"k": schema}}
    return schema


def _make(tmp: Path) -> dict[str, str]:
    """Every file the parametrised cases name, by key."""
    files: dict[str, bytes | str] = {
        "cat": json.dumps(TOOLS),
        "cat_plain": json.dumps([{"name": "get_weather", "description": "The weather for a city."}]),
        "cat_ref": json.dumps([{"name": "a", "description": "do a thing", "parameters": {
            "type": "object", "properties": {"r": {"$ref": "#/defs/nope"}, "$ref": {"type": "string"}}}}]),
        "cat_utf8": b'[{"name":"a:b","description":"\xff"}]',
        "cat_deep100": json.dumps([{"name": "a:b", "description": "d", "parameters": _nested_schema(100)}]),
        "cat_deep40": json.dumps([{"name": "a:b", "description": "d", "parameters": _nested_schema(40)}]),
        "cat_deep1000": ('[{"name": "a:b", "description": "d", "parameters": '
                         + '{"type": "object", "properties": {"k": ' * 1000 + '{"type": "string"}' + "}}" * 1000 + "}]"),
        "brackets": "[" * 100_000 + "]" * 100_000,
        "brackets300": "[" * 300 + "]" * 300,
        "objects": '{"a":' * 5_000 + "1" + "}" * 5_000,
        "hits_utf8": b'[["clock:now", 0.9], ["\xfe", 0.5]]',
        "hits_nan": '[["clock:now", NaN]]',
        "suite": '{"query": "wake me at 7", "gold": ["clock:alarm"]}\n',
        "suite_utf8": b'{"query": "wake me \xff", "gold": ["clock:alarm"]}\n',
        "suite_empty": "",
        "suite_blank": "\n\n  \n",
        "suite_deep": '{"query": "x", "gold": []}\n' + "[" * 5000 + "]" * 5000 + "\n",
        "knobs_utf8": b"threshold = 0.5\nnotes = { a = \"\xff\" }\n",
        "knobs_deep": "notes = { a = " + "[" * 3000 + "]" * 3000 + " }\n",
        "knobs_model": "embedding_model = 5\n",
        "knobs_notes": "notes = 5\n",
        "knobs_domain": "[knobs]\ndomain_floors = { nosuchdomain = 0.3 }\n",
        "knobs_floor": "threshold = 0.9\nsingle_hit_floor = 0.1\n",
        "knobs_forced": "single_hit_floor = 0.6\nforced_floor = 0.55\n",
        "knobs_other_model": 'embedding_model = "someone/else"\n',
        "knobs_nan_floor": "domain_floors = { clock = nan }\n",
        "params_utf8": b"n = \"\xc3\x28\"\n",
        "notes_txt": "not a notebook",
        "bad_ipynb": "{not json",
        "cands": json.dumps(["bedside lamp", "desk lamp"]),
        "toml_domain": 'domain = 5\n[[tools]]\nname = "a:b"\nshort_description = "x"\n',
        "schema_minlen": '{"type": "string", "minLength": 2000000000}',
        "schema_maxlen": '{"type": "string", "maxLength": 2000000000}',
        "schema_items": '{"type": "array", "items": {"type": "integer"}, "minItems": 100001}',
        "schema_quant": '{"type": "string", "pattern": "^a{3,2000000000}$"}',
        "gbnf_string": 'root ::= "\\"" [a-z]* "\\""\n',
        "text_big": '"' + "a" * (1 << 20) + '"',
        "knobs_chars": "max_message_chars = 99999999\n",
        "knobs_slope": "background_slope = 1e308\n",
        "knobs_weights": "relevance_floor = 0.5\nrelevance_weights = [1.0, 2.0]\n",
        "knobs_spelling": 'fix_spelling = "yes"\n',
        "knobs_calls": "max_calls = 10000000\n",
        "knobs_digits": "threshold = 1" + "0" * 5000 + "\n",
        "knobs_outside": "threshold = 0.99\n[knobs]\nsingle_hit_floor = 0.99\n",
        "schema_bigconst": '{"const": 1' + "0" * 5000 + "}",
        "cat_dupkey": '[{"name": "a:b", "name": "c:d", "description": "x"}]',
        "cat_comma": json.dumps([{"name": "a,b", "description": "a tool"}]),
        "cat_remote": json.dumps([{"name": "a:b", "description": "x", "parameters": {
            "type": "object", "properties": {"k": {"$ref": "http://example.org/s.json"}}}}]),
        "cat_if": json.dumps([{"name": "a:b", "description": "x", "parameters": {
            "type": "object", "properties": {"k": {"type": "string"}}, "if": {"required": ["k"]}}}]),
        "hits_twice": '[["clock:now", 0.9], ["clock:now", 0.1]]',
        "schema_dupkey": '{"type": "object", "properties": {"a": {"type": "string"}, "a": {"type": "integer"}}}',
        # 64-69 (a helper's variants, 2026-12-05)
        "schema_nan": '{"type": "number", "const": NaN}',
        "schema_inf": '{"enum": [1, Infinity]}',
        "knobs_empty": "",
        "knobs_emptytable": "# nothing here\n[knobs]\n",
        "knobs_forcedlow": "threshold = -1\nsingle_hit_floor = -1\nforced_floor = -1\n",
        "knobs_widen": "widen_k = 0\n",
        "cat_empty": "[]",
        "cat_cycle": json.dumps([{"name": "a:b", "description": "x", "parameters": {
            "type": "object", "properties": {"n": {"$ref": "#/$defs/node"}}, "required": ["n"],
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}, "required": ["next"]}}}}]),
        "cat_alias": json.dumps([{"name": "a:b", "description": "x", "parameters": {
            "type": "object", "properties": {"n": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}}}]),
        "cat_companion": json.dumps([{"name": "fs:cd", "description": "change the folder"},
                                     {"name": "fs:mv", "description": "move a file", "companions": ["fs:cdd"]}]),
        "suite_added": '{"query": "wake me at 7", "gold": ["clock:alarm"], "history": [{"role": "tools_added", "names": ["no:pe"]}]}\n',
        "suite_names": '{"query": "wake me at 7", "gold": ["clock:alarm"], "history": [{"role": "tools_added", "names": "clock:now"}]}\n',
        "suite_content": '{"query": "wake me at 7", "gold": ["clock:alarm"], "history": [{"role": "user", "content": 5}]}\n',
        "suite_role": '{"query": "wake me at 7", "gold": ["clock:alarm"], "history": [{"content": "hi"}]}\n',
        "suite_status": '{"query": "wake me at 7", "gold": ["clock:alarm"], "history": [{"role": "tool_used", "name": "clock:now", "status": {"a": 1}}]}\n',
    }
    out = {}
    for key, data in files.items():
        suffix = {"cat": ".json", "suite": ".jsonl", "knobs": ".toml", "params": ".toml", "notes": ".txt",
                  "bad": ".ipynb", "toml": ".toml", "hits": ".json", "cands": ".json",
                  "gbnf": ".gbnf", "text": ".txt"}.get(key.split("_")[0], ".json")
        path = tmp / f"{key}{suffix}"
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        out[key] = str(path)
    (tmp / "folder.toml").mkdir()
    out["dir"] = str(tmp / "folder.toml")
    (tmp / "suite_dir.jsonl").mkdir()
    out["suite_dir"] = str(tmp / "suite_dir.jsonl")
    descriptors = tmp / "descriptors"
    descriptors.mkdir()
    (descriptors / "ok.toml").write_text('[[tools]]\nname = "a:b"\nshort_description = "x"\n', encoding="utf-8")
    (descriptors / "sub.toml").mkdir()
    out["desc_subdir"] = str(descriptors)
    out["missing"] = str(tmp / "missing.py")
    os.mkfifo(tmp / "fifo.toml")  # nobody writes to it: opening it for reading blocked for ever
    out["fifo"] = str(tmp / "fifo.toml")
    os.symlink(tmp / "loop_b.json", tmp / "loop_a.json")
    os.symlink(tmp / "loop_a.json", tmp / "loop_b.json")
    out["loop"] = str(tmp / "loop_a.json")
    return out


#: (row, argv with {key} placeholders, a piece of the one stderr line). Every case exits 2.
CASES_2 = [
    # 12: invalid UTF-8 in a catalogue, with every command that reads one
    (12, ["prompt", "--catalog", "{cat_utf8}", "--offer", ""], "{cat_utf8}: not UTF-8 text (byte 0xff"),
    (12, ["route", "x y z w", "--catalog", "{cat_utf8}"], "{cat_utf8}: not UTF-8"),
    (12, ["decide", "--text", "x", "--hits", "[]", "--catalog", "{cat_utf8}"], "{cat_utf8}: not UTF-8"),
    (12, ["eval", "--suite", "{suite}", "--catalog", "{cat_utf8}"], "{cat_utf8}: not UTF-8"),
    (12, ["tune", "--suite", "{suite}", "--catalog", "{cat_utf8}", "--out", "{tmp}/k.toml"], "{cat_utf8}: not UTF-8"),
    (12, ["mcp-serve", "--catalog", "{cat_utf8}", "--embedder", "none"], "{cat_utf8}: not UTF-8"),
    (12, ["grammar", "--catalog", "{cat_utf8}", "--offer", ""], "{cat_utf8}: not UTF-8"),
    (12, ["generate", "hi there", "--catalog", "{cat_utf8}"], "{cat_utf8}: not UTF-8"),
    # 13: tool parameters nested too deep (a refusal naming the tool's parameters, never RecursionError)
    (13, ["prompt", "--catalog", "{cat_deep100}", "--offer", ""], "{cat_deep100}: nested deeper than 200"),
    (13, ["prompt", "--catalog", "{cat_deep40}", "--offer", ""], "[0].parameters: schema nested deeper than 64"),
    (13, ["prompt", "--catalog", "{cat_deep1000}", "--offer", ""], "{cat_deep1000}: nested deeper than 200"),
    # 14: JSON nested 300 .. 100,000 deep, wherever JSON is read
    (14, ["prompt", "--catalog", "{brackets}", "--offer", ""], "{brackets}: nested deeper than 200"),
    (14, ["prompt", "--catalog", "{brackets300}", "--offer", ""], "{brackets300}: nested deeper than 200"),
    (14, ["decide", "--text", "x", "--hits", "@{brackets}", "--catalog", "{cat}"], "--hits @{brackets}: nested deeper"),
    (14, ["decide", "--text", "x", "--hits", "@{objects}", "--catalog", "{cat}"], "--hits @{objects}: nested deeper"),
    (14, ["resolve-arg", "--candidates", "{brackets}", "--value", "x", "--no-embed"],
     "--candidates {brackets}: nested deeper"),
    (14, ["eval", "--suite", "{suite_deep}", "--catalog", "{cat}"], "{suite_deep}:2: nested deeper"),
    (14, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_deep}"], "{knobs_deep}: nested deeper"),
    # 17: a folder or an endless file as knobs
    (17, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{dir}"], "{dir}: is a folder"),
    (17, ["decide", "--text", "x", "--hits", "[]", "--catalog", "{cat}", "--knobs", "{dir}"], "{dir}: is a folder"),
    (17, ["eval", "--suite", "{suite}", "--catalog", "{cat}", "--knobs", "{dir}"], "{dir}: is a folder"),
    (17, ["grammar", "--catalog", "{cat}", "--offer", "", "--knobs", "{dir}"], "{dir}: is a folder"),
    (17, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "/dev/zero"], "/dev/zero: larger than 64 MiB"),
    (17, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_utf8}"], "{knobs_utf8}: not UTF-8"),
    # 18: hits file that is not UTF-8, or not strict JSON
    (18, ["decide", "--text", "x", "--hits", "@{hits_utf8}", "--catalog", "{cat}"], "--hits @{hits_utf8}: not UTF-8"),
    (18, ["decide", "--text", "x", "--hits", "@{dir}", "--catalog", "{cat}"], "--hits @{dir}: is a folder"),
    (18, ["decide", "--text", "x", "--hits", "@{hits_nan}", "--catalog", "{cat}"], "NaN is not JSON"),
    # 19: suite not UTF-8
    (19, ["eval", "--suite", "{suite_utf8}", "--catalog", "{cat}"], "{suite_utf8}: not UTF-8"),
    (19, ["tune", "--suite", "{suite_utf8}", "--catalog", "{cat}", "--out", "{tmp}/k.toml"], "{suite_utf8}: not UTF-8"),
    # 20, 21: strategy parameters of the wrong type or impossible value
    (20, ["eval", "--suite", "{suite}", "--catalog", "{cat}", "--strategy", "bm25:min_score=abc"],
     "BM25.min_score: expected a number, got 'abc'"),
    (20, ["eval", "--suite", "{suite}", "--catalog", "{cat}", "--strategy", "bm25:min_score=nan"],
     "BM25.min_score: expected a number"),
    (20, ["eval", "--suite", "{suite}", "--catalog", "{cat}", "--strategy", "bm25:min_score=NaN"],
     "BM25.min_score: expected a number, got nan"),
    (20, ["eval", "--suite", "{suite}", "--catalog", "{cat}", "--strategy", "bm25:min_score=inf"],
     "BM25.min_score: expected a number"),
    (20, ["eval", "--suite", "{suite}", "--catalog", "{cat}", "--strategy", "bm25:min_score=1e999"],
     "BM25.min_score: expected a number, got inf"),
    (20, ["eval", "--suite", "{suite}", "--catalog", "{cat}", "--strategy", "bm25:k=2.5"],
     "BM25.k: expected an integer, got 2.5"),
    (20, ["eval", "--suite", "{suite}", "--catalog", "{cat}", "--strategy", "hybrid-rrf:alpha=true"],
     "Hybrid.alpha: expected a number, got True"),
    (21, ["eval", "--suite", "{suite}", "--catalog", "{cat}", "--strategy", "hybrid-rrf:rrf_k=-2"],
     "Hybrid.rrf_k: expected an integer >= 0, got -2"),
    # 24: a folder named *.toml inside a descriptors folder
    (24, ["prompt", "--catalog", "{desc_subdir}", "--offer", ""], "sub.toml: is a folder"),
    (24, ["prompt", "--catalog", "{dir}", "--offer", ""], "no *.toml descriptor files"),
    # 25, 26: report inputs, refused before any notebook runs
    (25, ["report", "--params", "{params_utf8}", "--out", "{tmp}/r"], "--params {params_utf8}: not UTF-8"),
    (25, ["report", "--params", "{dir}", "--out", "{tmp}/r"], "--params {dir}: is a folder"),
    (26, ["report", "--notebook", "{missing}", "--out", "{tmp}/r"], "--notebook {missing}: no such file"),
    (26, ["report", "--notebook", "{dir}", "--out", "{tmp}/r"], "expected a .py percent script or an .ipynb"),
    (26, ["report", "--notebook", "{notes_txt}", "--out", "{tmp}/r"], "expected a .py percent script or an .ipynb"),
    (26, ["report", "--notebook", "{bad_ipynb}", "--out", "{tmp}/r"], "--notebook {bad_ipynb}: not a readable notebook"),
    (26, ["report", "--notebook", "{missing}", "--out", "{cat}"], "--out {cat}: is a file"),
    # 33: knobs that pass type checks but cannot work
    (33, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_model}"], "embedding_model: expected a model id"),
    (33, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_notes}"], "notes: expected a table, got 5"),
    (33, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_domain}"],
     "domain_floors: unknown domain 'nosuchdomain'"),
    (33, ["decide", "--text", "x", "--hits", "[]", "--catalog", "{cat}", "--knobs", "{knobs_domain}"],
     "unknown domain 'nosuchdomain'"),
    (33, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_floor}"], "single_hit_floor: 0.1 is below threshold 0.9"),
    (33, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_forced}"], "forced_floor: 0.55 is below"),
    (33, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_other_model}"], "fitted for 'someone/else'"),
    (33, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_nan_floor}"], "domain_floors.clock: expected a cosine"),
    # 34: resolve-arg thresholds
    (34, ["resolve-arg", "--candidates", "{cands}", "--value", "xyz lamp", "--no-embed", "--auto", "0.1", "--ask", "0.9"],
     "--auto: 0.1 is below --ask 0.9"),
    (34, ["resolve-arg", "--candidates", "{cands}", "--value", "x", "--no-embed", "--auto", "0.3"], "--auto: 0.3 is below"),
    (34, ["resolve-arg", "--candidates", "{cands}", "--value", "x", "--no-embed", "--ask", "nan"], "--ask: expected a score"),
    # 40: usage errors are one line
    (40, [], "the following arguments are required: command"),
    (40, ["frobnicate"], "invalid choice: 'frobnicate'"),
    (40, ["mcp-serve", "--mode", "bogus"], "argument --mode: invalid choice: 'bogus'"),
    (40, ["route"], "the following arguments are required: text"),
    # 41, 42: empty and folder suites
    (41, ["eval", "--suite", "{suite_empty}", "--catalog", "{cat}"], "{suite_empty}: no queries"),
    (41, ["eval", "--suite", "{suite_blank}", "--catalog", "{cat}"], "{suite_blank}: no queries"),
    (41, ["tune", "--suite", "{suite_empty}", "--catalog", "{cat}", "--out", "{tmp}/k.toml"], "no queries"),
    (42, ["eval", "--suite", "{suite_dir}", "--catalog", "{cat}"], "{suite_dir}: is a folder"),
    # 43: tune flags, before any work
    (43, ["tune", "--suite", "{suite}", "--catalog", "{cat}", "--out", "{tmp}/k.toml", "--max-lock-in", "nan"],
     "--max-lock-in: expected a rate in [0, 1], got nan"),
    (43, ["tune", "--suite", "{suite}", "--catalog", "{cat}", "--out", "{tmp}/k.toml", "--max-lock-in", "-1"],
     "--max-lock-in: expected a rate"),
    (43, ["tune", "--suite", "{suite}", "--catalog", "{cat}", "--out", "{tmp}/k.toml", "--max-mean-offer", "-5"],
     "--max-mean-offer: expected a finite number"),
    (43, ["tune", "--suite", "{suite}", "--catalog", "{cat}", "--out", "{tmp}/k.toml", "--max-mean-offer", "inf"],
     "--max-mean-offer: expected a finite number"),
    (43, ["tune", "--suite", "{suite}", "--catalog", "{cat}", "--out", "{dir}"], "--out {dir}: is a folder"),
    (43, ["tune", "--suite", "{suite}", "--catalog", "{cat}", "--out", "{cat}/k.toml"], "is a file, not a folder"),
    # 44: a TOML descriptor's domain of the wrong type
    (44, ["prompt", "--catalog", "{toml_domain}", "--offer", ""], "{toml_domain}: domain: expected a non-empty string, got 5"),
    # 47-49 (a new user's trial, 2026-12-04): a typo of 'reference', knobs naming domains on a catalogue
    # without any, a tool catalogue given as candidates (the whole tool was quoted, ~400 characters)
    (47, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "referense"], "did you mean '--knobs reference'?"),
    (48, ["route", "x y z w", "--catalog", "{cat_plain}", "--knobs", "{knobs_domain}"], "this catalogue has no domains"),
    # 50: a $ref that points at nothing is refused when the catalogue loads, naming file and pointer
    # (it routed, and failed later in the compiler on a line without the file); a property named $ref is fine
    (50, ["route", "do the thing please now", "--catalog", "{cat_ref}"],
     "{cat_ref}: [0].parameters: #/properties/r/$ref: $ref '#/defs/nope' points at nothing"),
    (50, ["prompt", "--catalog", "{cat_ref}", "--offer", "a"], "points at nothing"),
    # 51-53 (a helper's variants, 2026-12-04): counts the compiler would spell in millions of blocks
    # (it hung), a candidate output of any size (read whole: /dev/zero hung), a score that is no cosine
    (51, ["grammar", "--schema", "{schema_minlen}"], "#/minLength: 2000000000 is above 100,000"),
    (51, ["grammar", "--schema", "{schema_maxlen}"], "#/maxLength: 2000000000 is above 100,000"),
    (51, ["grammar", "--schema", "{schema_items}"], "#/minItems: 100001 is above 100,000"),
    (51, ["grammar", "--schema", "{schema_quant}"], "quantifier {{3,2000000000}} counts above 100,000"),
    (52, ["grammar-check", "--grammar", "{gbnf_string}", "--text-file", "/dev/zero"], "--text-file /dev/zero: larger than 1 MiB"),
    (52, ["grammar-check", "--grammar", "{gbnf_string}", "--text-file", "{text_big}"], "larger than 1 MiB"),
    (53, ["decide", "--text", "what time is it", "--hits", '[["clock:now", -5]]'], "--hits[0]: expected a score in [-1, 1]"),
    # 54 (a helper's variant, 2026-12-05): a count of calls spelt out in nested blocks
    (54, ["grammar", "--catalog", "{cat}", "--offer", "clock:alarm", "--max-calls", "10000000"],
     "max_calls: 10,000,000 is above 100, the most calls one reply may carry"),
    # 55 (a helper's variants, 2026-12-05): knobs the grammar or the standardised scores cannot take
    (55, ["grammar", "--catalog", "{cat}", "--offer", "clock:alarm", "--knobs", "{knobs_chars}"],
     "max_message_chars: 99,999,999 is above 100,000"),
    (55, ["route", "will it rain?", "--catalog", "{cat}", "--knobs", "{knobs_slope}"],
     "background_slope: expected a number in (0, 100], got 1e+308"),
    (49, ["resolve-arg", "--candidates", "{cat}", "--value", "x", "--no-embed"], "'properties': {{...}}, 'type': 'object'}}}}"),  # braces doubled: formatted
    # 56-63 (a helper's variants, 2026-12-05)
    (56, ["route", "set an alarm \udcff\udcfe"], "not UTF-8 text"),
    (56, ["resolve-arg", "--candidates", "{cands}", "--value", "lamp\udcff"], "not UTF-8 text"),
    (56, ["grammar-check", "--grammar", "{gbnf_string}", "--text", "yes\udcff"], "not UTF-8 text"),
    (59, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_weights}"], "relevance_weights: expected 4 numbers"),
    (59, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_spelling}"], "fix_spelling: expected true or false"),
    (59, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_calls}"], "max_calls: 10,000,000 is above 100"),
    (59, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_digits}"], "{knobs_digits}: not valid TOML"),
    (59, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_outside}"], "'threshold' stands outside the [knobs]"),
    (59, ["route", "x y z w", "--catalog", "{cat}", "--knobs", ""], "--knobs: expected a path, got an empty string"),
    (60, ["grammar", "--schema", "{schema_bigconst}"], "{schema_bigconst}: not valid JSON"),
    (61, ["route", "x y z w", "--catalog", "{cat_dupkey}"], "{cat_dupkey}: not valid JSON (key 'name' given twice"),
    (61, ["prompt", "--catalog", "{cat_comma}", "--offer", ""], "a tool name may not hold a comma"),
    (61, ["route", "x y z w", "--catalog", "{cat_remote}"], "only local $ref ('#...') are supported"),
    (61, ["grammar", "--schema", "{schema_dupkey}"], "{schema_dupkey}: not valid JSON (key 'a' given twice"),
    (62, ["decide", "--text", "what time is it", "--hits", "@{hits_twice}", "--catalog", "{cat}"],
     "'clock:now' is scored twice"),
    (62, ["grammar-check", "--grammar", "{gbnf_string}", "--text", "x", "--model", "{missing}"], "{missing}: no such file"),
    (62, ["grammar", "--catalog", "{cat_if}", "--offer", "a:b"], "{cat_if}: a:b: #/if: unsupported keyword 'if'"),
    # 64-70 (a helper's variants, 2026-12-05)
    (64, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{fifo}"], "{fifo}: a pipe with nothing to read"),
    (64, ["decide", "--text", "what time is it", "--hits", "@{fifo}", "--catalog", "{cat}"], "a pipe with nothing to read"),
    (64, ["grammar", "--schema", "{fifo}"], "a pipe with nothing to read"),
    (64, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{loop}"], "{loop}: a loop of symbolic links"),
    (64, ["route", "x y z w", "--catalog", "{loop}"], "{loop}: a symbolic link that leads to no file"),
    (65, ["grammar", "--schema", "{schema_nan}"], "{schema_nan}: not valid JSON (NaN is not JSON)"),
    (65, ["grammar", "--schema", "{schema_inf}"], "{schema_inf}: not valid JSON (Infinity is not JSON)"),
    (66, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_empty}"], "{knobs_empty}: holds no knobs"),
    (66, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_emptytable}"], "holds no knobs"),
    (67, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_forcedlow}"], "forced_floor: expected a cosine in [0.5, 1]"),
    (67, ["route", "x y z w", "--catalog", "{cat}", "--knobs", "{knobs_widen}"], "widen_k: expected an integer >= 1, got 0"),
    (68, ["calibrate", "--catalog", "{cat_empty}", "--no-cache"], "{cat_empty}: the catalogue has no tools"),
    (68, ["calibrate", "--catalog", "{cat_empty}"], "{cat_empty}: the catalogue has no tools"),
    (69, ["route", "x y z w", "--catalog", "{cat_cycle}"], "#/properties/n/$ref: recursive $ref without a base case"),
    (69, ["prompt", "--catalog", "{cat_alias}", "--offer", "a:b"], "#/$defs/a/$ref: recursive $ref without a base case"),
    (69, ["prompt", "--catalog", "{cat_companion}", "--offer", "fs:mv"],
     "fs:mv: companions: companion 'fs:cdd' is not a tool of this catalogue; did you mean 'fs:cd'?"),
    (70, ["eval", "--suite", "{suite_added}", "--catalog", "{cat}", "--strategy", "bm25"], ".history[0].names: unknown tool 'no:pe'"),
    (70, ["eval", "--suite", "{suite_names}", "--catalog", "{cat}", "--strategy", "bm25"],
     "history[0].names: expected a non-empty list of tool names"),
    (70, ["eval", "--suite", "{suite_content}", "--catalog", "{cat}", "--strategy", "bm25"], "history[0].content: expected a string"),
    (70, ["eval", "--suite", "{suite_role}", "--catalog", "{cat}", "--strategy", "bm25"], "history[0].role: expected a role of"),
    (70, ["eval", "--suite", "{suite_status}", "--catalog", "{cat}", "--strategy", "bm25"],
     "history[0].status: expected a string such as 'ok'"),
]


@pytest.mark.parametrize("row, argv, expected", CASES_2,
                         ids=[f"row{r}-{'-'.join(a[:1] or ['none'])}-{i}" for i, (r, a, _) in enumerate(CASES_2)])
def test_bad_input_is_one_line_naming_it(capsys, tmp_path, row, argv, expected):
    files = {**_make(tmp_path), "tmp": str(tmp_path)}
    argv = [a.format(**files) for a in argv]
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2, (row, out, err)
    assert "Traceback" not in err and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("eris-lab: error: "), err
    assert expected.format(**files) in err, err
    assert not (tmp_path / "r").exists() and not (tmp_path / "k.toml").exists()  # nothing half-written


def test_bad_input_as_a_subprocess_is_one_line_and_no_traceback(tmp_path):
    import subprocess

    files = _make(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    for argv in (["prompt", "--catalog", files["brackets"], "--offer", ""], []):
        done = subprocess.run([sys.executable, "-m", "eris_lab", *argv], capture_output=True, text=True, env=env,
                              cwd=ROOT, timeout=60)
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stderr.startswith("eris-lab: error: ")


def test_files_reader_refuses_each_kind(tmp_path):
    from eris_lab._files import (
        MAX_NESTING,
        load_json_file,
        load_toml_file,
        loads_json,
        nesting_depth,
        read_user_text,
    )
    from eris_lab.errors import CatalogError, ErisLabError

    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(ErisLabError, match="larger than"):
        read_user_text(tmp_path / "big", max_bytes=100)
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf[1]")
    assert load_json_file(tmp_path / "bom.json") == [1]  # a BOM is not an error
    with pytest.raises(CatalogError, match="not UTF-8 text \\(byte 0xc3 at offset 1\\)"):
        (tmp_path / "l1.json").write_bytes(b'"\xc3\x28"')
        load_json_file(tmp_path / "l1.json", error=CatalogError)
    for text in ("[1, Infinity]", "[-Infinity]", '{"a": NaN}'):
        with pytest.raises(ErisLabError, match="is not JSON"):
            loads_json(text, where="x")
    assert loads_json("[" * MAX_NESTING + "]" * MAX_NESTING, where="x") is not None
    with pytest.raises(ErisLabError, match="nested deeper"):
        loads_json("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1), where="x")
    (tmp_path / "d.toml").write_text("a = " + "[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ErisLabError, match="d.toml: nested deeper"):
        load_toml_file(tmp_path / "d.toml")
    assert nesting_depth(1) == 0 and nesting_depth([]) == 1 and nesting_depth({"a": [[1]]}) == 3


def test_tune_out_file_gets_the_umask_mode(tmp_path):  # row 23 (fixed before this issue)
    from eris_lab.knobs import Knobs

    old = os.umask(0o022)
    try:
        path = Knobs().save(tmp_path / "knobs.toml")
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    finally:
        os.umask(old)


# ---------------------------------------------------------------------------------------------
# Output: control characters never reach the terminal raw (row 39)
# ---------------------------------------------------------------------------------------------


def test_control_characters_in_tool_names_are_escaped_in_the_table(capsys, tmp_path):
    names = ["nl\nname", "ctl\x01\x7f", "esc\x1b[31mred", "bidi\u202eevil"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps([{"name": n, "description": "a tool"} for n in names]), encoding="utf-8")
    hits = json.dumps([[n, 0.9 - i * 0.01] for i, n in enumerate(names)])
    assert main(["decide", "--text", "do the thing please", "--hits", hits, "--catalog", str(path)]) == 0
    out = capsys.readouterr().out
    assert "nl\\nname" in out and "ctl\\x01\\x7f" in out and "esc\\x1b[31mred" in out and "bidi\\u202eevil" in out
    assert not any(ch in out for ch in "\x01\x7f\x1b\u202e")
    assert all(not line.startswith("name") for line in out.splitlines())  # the newline did not break a row
    assert main(["decide", "--text", "x", "--hits", json.dumps([["no\x1bsuch", 0.5]]), "--catalog", str(path)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and len(err.splitlines()) == 1
    assert printable("café 東京") == "café 東京" and printable("a\tb") == "a\\tb"


# ---------------------------------------------------------------------------------------------
# Executors and sessions (rows 1, 36, 46)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("expression, result", [
    ("round(1, -3*10**7)", 0), ("round(1, -10**9)", 0), ("round(1.5, -10**9)", 0), ("round(2.25, 10**9)", 2.25),
    ("round(1234, -2)", 1200), ("round(1234.5678, 2)", 1234.57), ("round(2**4000, -1301)", 0),
])
def test_calc_round_with_huge_digits_is_answered_at_once(expression, result):
    from eris_lab.catalog import load
    from eris_lab.execution import Session, execute

    catalog = load(None)
    start = time.perf_counter()
    with Session() as session:
        res = execute({"name": "calc:evaluate", "arguments": {"expression": expression}}, ["calc:evaluate"], catalog,
                      timeout_s=2, session=session)
    assert time.perf_counter() - start < 1.0
    assert res.status == "ok" and res.data["result"] == result


@pytest.mark.parametrize("expression", ["9**9**9", "(2**4000)*(2**4000)", "10**5000", "-" * 480 + "1e400",
                                        "(" * 300 + "1" + ")" * 300, "round(1, 2, 3)", "round(1, 0.5)"])
def test_calc_refuses_work_it_cannot_bound(expression):
    from eris_lab.errors import ToolError
    from eris_lab.tools.calc import calc_evaluate

    start = time.perf_counter()
    with pytest.raises(ToolError):
        calc_evaluate({"expression": expression}, None)
    assert time.perf_counter() - start < 1.0


def test_vault_refuses_a_planted_hard_link(tmp_path):
    from eris_lab.errors import ToolError
    from eris_lab.execution import Session
    from eris_lab.tools.vault import vault_read, vault_write

    outside = tmp_path / "secret.txt"
    outside.write_text("outside the vault", encoding="utf-8")
    session = Session(tmp_path / "s")
    session.vault.mkdir(parents=True)
    os.link(outside, session.vault / "hard.md")
    with pytest.raises(ToolError, match="hard link"):
        vault_read({"path": "hard.md"}, session)
    for mode in ("overwrite", "append"):
        with pytest.raises(ToolError, match="hard link"):
            vault_write({"path": "hard.md", "content": "pwned", "mode": mode}, session)
    assert outside.read_text(encoding="utf-8") == "outside the vault"  # not truncated, not appended to
    vault_write({"path": "own.md", "content": "mine", "mode": "create"}, session)
    assert vault_read({"path": "own.md"}, session)["content"] == "mine"


def test_temporary_sessions_are_removed(tmp_path, monkeypatch):
    import tempfile

    from eris_lab.catalog import load
    from eris_lab.execution import Session, execute

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    left = lambda: sorted(p.name for p in tmp_path.glob("eris_lab_session_*"))  # noqa: E731
    with Session() as session:
        assert session.temporary and session.folder.is_dir()
    assert not session.folder.exists()
    session = Session()
    folder = session.folder
    del session
    gc.collect()
    assert not folder.exists()
    res = execute({"name": "vault:write", "arguments": {"path": "n.md", "content": "x"}}, ["vault:write"], load(None))
    gc.collect()
    assert res.status == "ok" and left() == []
    given = Session(tmp_path / "mine")
    given.close()
    assert (tmp_path / "mine").is_dir()  # a folder the caller gave is never removed


# ---------------------------------------------------------------------------------------------
# MCP (rows 1, 35, 45)
# ---------------------------------------------------------------------------------------------


def test_meta_tools_check_arguments_against_their_schema():
    from eris_lab.catalog import load
    from eris_lab.mcp.meta import MetaSession

    meta = MetaSession(load(None), None)
    text, is_error = meta.call("tool_search", {"query": "x" * 1_000_000})
    assert is_error and "#/query" in text and "is too long" in text and len(text) < 1000
    text, is_error = meta.call("tool_search", {"query": "alarm", "evil": 1})
    assert is_error and "'evil' was unexpected" in text
    text, is_error = meta.call("tool_search", {"query": 5})
    assert is_error and "#/query" in text
    text, is_error = meta.call("tool_execute", {"name": "calc:evaluate"})
    assert is_error and "'arguments' is a required property" in text
    text, is_error = meta.call("tool_search", {"query": "set an alarm"})
    assert not is_error and json.loads(text)["hits"]


def test_tool_route_checks_its_schema_and_names_a_rule():
    from eris_lab.catalog import load
    from eris_lab.mcp.meta import MetaSession, check_arguments
    from eris_lab.mcp.server import KEYWORD_NO_MATCH, KEYWORD_RULE, ROUTE_TOOL, _Routed

    routed = _Routed(MetaSession(load(None), None), None, 5)
    assert routed.route("set an alarm for seven")["rule"] == KEYWORD_RULE
    assert routed.route("qqqq zzzz")["rule"] == KEYWORD_NO_MATCH
    problem = check_arguments("tool_route", ROUTE_TOOL["input_schema"], {"text": "y" * 1_000_000})
    assert problem is not None and "is too long" in problem and len(problem) < 1000


def test_mcp_server_answers_while_a_tool_runs(tmp_path):
    anyio = pytest.importorskip("anyio")
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    env = {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "ERIS_LAB_CACHE": str(tmp_path / "cache"),
           "TOKENIZERS_PARALLELISM": "false", "TMPDIR": str(tmp_path)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "eris_lab", "mcp-serve", "--embedder", "none",
                                                               "--mode", "routed"], env=env, cwd=str(ROOT))
    times: dict[str, float] = {}

    async def main_():
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    routed = await session.call_tool("tool_route", {"text": "calculate round(1, -3*10**7)"})
                    big = await session.call_tool("tool_route", {"text": "z" * 1_000_000})
                    start = time.perf_counter()
                    results = {}

                    async def calc():
                        results["calc"] = await session.call_tool(
                            "calc:evaluate", {"expression": "round(1, -3*10**7)"})
                        times["calc"] = time.perf_counter() - start

                    async def route():
                        results["route"] = await session.call_tool("tool_route", {"text": "what is the weather"})
                        times["route"] = time.perf_counter() - start

                    async with anyio.create_task_group() as tg:
                        tg.start_soon(calc)
                        tg.start_soon(route)
                    return routed, big, results

    routed, big, results = anyio.run(main_)
    text = "".join(b.text for b in routed.content)
    assert "calc:evaluate" in text and json.loads(text)["rule"]
    big_text = "".join(b.text for b in big.content)
    assert big.is_error and "is too long" in big_text and len(big_text) < 1000  # 1 MB is never echoed
    assert not results["calc"].is_error and '"result": 0' in "".join(b.text for b in results["calc"].content)
    assert times["calc"] < 5 and times["route"] < 5
    assert not list(tmp_path.glob("eris_lab_session_*"))  # the server's temporary session went with it


# ---------------------------------------------------------------------------------------------
# Rows 57, 58, 60, 63 (a helper's variants, 2026-12-05)
# ---------------------------------------------------------------------------------------------


def test_stdin_is_capped_and_odd_strings_are_written_as_valid_unicode(tmp_path):
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    run = [sys.executable, "-m", "eris_lab", "parse", "--offered", "clock:now"]
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run(run, stdin=zero, capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and done.stderr.strip() == "eris-lab: error: stdin: more than 64 MiB; no model writes that much"
    surrogate = '{"name": "clock:now", "arguments": {"timezone": "\\ud800"}}'
    done = subprocess.run(run, input=surrogate, capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    # a lone surrogate is U+FFFD: written as its escape, the reader that printed it crashed (round fourteen)
    assert json.loads(done.stdout)["calls"][0]["arguments"]["timezone"] == "\ufffd"
    done.stdout.encode("utf-8")
    # a closed stdin is no input, not a traceback (round fourteen, 2026-12-07)
    done = subprocess.run(run, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=60, preexec_fn=lambda: os.close(0))
    assert done.returncode == 0 and json.loads(done.stdout)["calls"] == [], done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_one_line():
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "eris_lab", "grammar", "--offer", "clock:now"], stdout=full,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and done.stderr == "eris-lab: error: output: No space left on device\n"


def test_an_integer_bound_past_int64_is_an_open_side():
    from eris_lab.grammar import compile_schema

    huge = compile_schema({"type": "integer", "minimum": 0, "maximum": 10 ** 400})
    assert huge.text == compile_schema({"type": "integer", "minimum": 0}).text and len(huge.text) < 200


def test_control_characters_in_the_prompt_table_are_escaped(capsys, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps([{"name": "ctl\x1b[31m:x", "description": "evil \x1b]0;title\x07 desc\x00"}]),
                    encoding="utf-8")
    assert main(["prompt", "--catalog", str(path), "--offer", "ctl\x1b[31m:x"]) == 0
    out = capsys.readouterr().out
    assert "| ctl\\x1b[31m:x | evil \\x1b]0;title\\x07 desc\\x00 |" in out
    assert not any(ch in out for ch in "\x1b\x07\x00")


def test_a_pipe_with_a_writer_is_read(tmp_path):  # row 64: refusing FIFOs must not refuse `... | --knobs /dev/stdin`
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    (tmp_path / "c.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    argv = [sys.executable, "-m", "eris_lab", "route", "what time is it", "--catalog", str(tmp_path / "c.json"),
            "--knobs", "/dev/stdin"]
    done = subprocess.run(argv, input="widen_k = 0\n", capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "widen_k" in done.stderr, done.stderr  # read, then judged
    done = subprocess.run(argv, input="", capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "a pipe with nothing to read" in done.stderr, done.stderr


def test_a_recursive_schema_with_a_base_case_loads(tmp_path):  # row 69: only recursion that never ends is refused
    from eris_lab.catalog import load

    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                                             "v": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/node"}]},
                                             "next": {"$ref": "#/$defs/node"}},
            "required": ["kids", "v"]}
    schema = {"type": "object", "properties": {"n": {"$ref": "#/$defs/node"}}, "required": ["n"], "$defs": {"node": tree}}
    (tmp_path / "c.json").write_text(json.dumps([{"name": "a:b", "description": "x", "parameters": schema}]), encoding="utf-8")
    assert load(tmp_path / "c.json").names == ("a:b",)


def test_out_on_a_fifo_is_one_line_and_leaves_it(tmp_path, capsys):
    """Row 72: ``--out`` naming a FIFO (or a device) is refused in one line; the node stays."""
    import stat

    fifo = tmp_path / "knobs.fifo"
    os.mkfifo(fifo)
    assert main(["calibrate", "--out", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a regular file" in err and str(fifo) in err, err
    assert stat.S_ISFIFO(fifo.stat().st_mode)
