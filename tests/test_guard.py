"""Guards: conversation, URLs, page phrases, text hygiene."""

from __future__ import annotations

import pytest

from eris_lab.catalog import Catalog, Tool
from eris_lab.guard import clean_text, fetch_tool, find_urls, is_conversational, page_phrase, tool_keywords

KEYWORDS = tool_keywords(Catalog.from_names(["weather:current", "mail:read", "run_tests", "edit_file"]))


@pytest.mark.parametrize("text", ["hi", "Hi!", "  hello  ", "thanks", "Thank you!", "danke", "test", "Guten Morgen!",
                                  "ok", "", "Tell me a joke", "lol"])
def test_conversational(text):
    assert is_conversational(text, KEYWORDS)


@pytest.mark.parametrize("text", ["hey, fix the login bug", "weather?", "mails", "example.org",
                                  "hi there, what's the weather in Berlin tomorrow?", "run tests"])
def test_not_conversational(text):
    assert not is_conversational(text, KEYWORDS)


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("Open https://example.org/changelog and summarise", ("https://example.org/changelog",)),
        ("see www.heise.de.", ("www.heise.de",)),
        ("check example.com/a?b=1, please", ("example.com/a?b=1",)),
        ("read notes/today.md and test.txt", ()),
        ("Schreibe die Datei /data/test.txt", ()),
        ("mail me at bob@example.com", ()),
        ("version 1.2.3 is out", ()),
    ],
)
def test_find_urls(text, urls):
    assert find_urls(text) == urls


def test_page_phrase_needs_a_page_word():
    assert page_phrase("please open the page") == "open the page"
    assert page_phrase("öffne die Seite bitte") == "öffne die Seite"
    assert page_phrase("open the door") == "" and page_phrase("you will open the way") == ""


def test_clean_text_drops_control_characters_and_cuts():
    assert clean_text("a\x00b\u200b c\n\n d\x7f") == "ab c d"
    assert clean_text("x" * 50, max_chars=10) == "x" * 10


def test_fetch_tool_prefers_web_fetch_then_named_fetch():
    assert fetch_tool(Catalog.from_names(["web:fetch", "fetch_url"])) == "web:fetch"
    assert fetch_tool(Catalog.from_names(["git_fetch", "web_fetch"])) == "web_fetch"
    assert fetch_tool(Catalog([Tool(name="clock", description="x")])) == ""
