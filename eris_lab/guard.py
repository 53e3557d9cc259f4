"""Cheap lexical guards that run before (and instead of) embedding.

* Conversation: empty input, a whole-message greeting or thanks, or short input (few words or
  few characters) that carries no URL and no tool keyword is conversation: nothing is offered.
  The greeting match is whole-message only (trim, lower-case, strip punctuation), so
  "hey, fix the login bug" keeps its task (reported case route-14; fix from the PR behind route-13).
* URLs: a URL or a domain-like token forces the catalogue's fetch tool at score 1.0, as does a
  page phrase such as "open the page" (never the bare verb "open").
* Text hygiene: control characters removed, Unicode NFC, whitespace collapsed, length capped.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

from .catalog import Catalog, name_words
from .lexicon import GREETINGS, KEYWORD_STOPWORDS

__all__ = [
    "clean_text",
    "find_urls",
    "is_conversational",
    "is_greeting",
    "tool_keywords",
    "fetch_tool",
    "page_phrase",
    "names_domain",
    "FORCED_SCORE",
]

FORCED_SCORE = 1.0  # score of a lexically forced hit (DESIGN.md: URL = web:fetch at 1.0)

_GREETING_PHRASES = frozenset(
    " ".join(line.split()) for line in GREETINGS
) | frozenset(w for line in GREETINGS for w in line.split())

# Conservative TLD list: no TLDs that collide with file extensions (md, py, sh, rs, pl, txt...).
_TLDS = (
    "com|org|net|io|dev|ai|app|de|at|ch|eu|uk|fr|nl|es|it|se|no|dk|fi|pl|cz|jp|cn|in|us|ca|au|edu|gov|"
    "info|biz|news|tech|xyz|site|online|blog|wiki|co"
)
_URL_RE = re.compile(
    r"(?i)\b(?:https?://|www\.)[^\s<>\"'`]+"
    rf"|(?<![/\w@.-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:{_TLDS})\b(?:/[^\s<>\"'`]*)?"
)
#: Phrases that name a page, link or URL; the bare verb "open" is not among them.
_PAGE_PHRASE_RE = re.compile(
    r"(?i)\b(?:open|fetch|load|read|visit|summari[sz]e|download|get|grab)\s+(?:the|this|that|a|my)?\s*"
    r"(?:web\s*)?(?:page|website|web\s*site|link|url|article\s+at|site)\b"
    r"|\b(?:öffne|lade|lies|hole)\s+(?:die|diese|den|diesen)?\s*(?:seite|webseite|link|url)\b"
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]")
_PUNCT_RE = re.compile(r"[^\w\s]", re.UNICODE)
_WORD_RE = re.compile(r"\w+", re.UNICODE)



def clean_text(text: str, max_chars: int = 0) -> str:
    """Normalise a raw message: NFC, control characters dropped, whitespace collapsed, cut to ``max_chars``.

    Parameters
    ----------
    text : str
    max_chars : int
        0 = no cut. The cut keeps the start (the request usually comes first).
    """
    text = unicodedata.normalize("NFC", text or "")
    text = text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
    text = _CONTROL_RE.sub("", text)
    text = " ".join(text.split())
    if max_chars and len(text) > max_chars:
        text = text[:max_chars]
    return text


def find_urls(text: str) -> tuple[str, ...]:
    """URLs and domain-like tokens (``example.org/changelog``) in ``text``, in order; file names are not."""
    return tuple(m.group(0).rstrip(".,;:!?)]}") for m in _URL_RE.finditer(text))


def page_phrase(text: str) -> str:
    """The page phrase in ``text`` ("open the page", "öffne die Seite"), or ``""``."""
    match = _PAGE_PHRASE_RE.search(text)
    return match.group(0) if match else ""


def tool_keywords(catalog: Catalog) -> frozenset[str]:
    """Words that make a short message a tool request: domains, name words (>= 4 letters), ``keywords``.

    Computed once per catalogue (``Catalog.derived``).
    """
    return catalog.derived("guard.tool_keywords", _tool_keywords)


def _tool_keywords(catalog: Catalog) -> frozenset[str]:
    words: set[str] = set()
    for tool in catalog:
        if tool.domain:
            words.add(tool.domain.lower())
        words.update(w for w in name_words(tool.name) if len(w) >= 4 and w not in KEYWORD_STOPWORDS)
        words.update(k.lower() for k in tool.keywords)
    return frozenset(words)


def _normalise_for_greeting(text: str) -> str:
    return " ".join(_PUNCT_RE.sub(" ", text.lower()).split())


def is_greeting(text: str) -> bool:
    """True for empty input or a whole-message greeting, thanks or ping (:data:`~eris_lab.lexicon.GREETINGS`)."""
    norm = _normalise_for_greeting(text)
    return not norm or (norm in _GREETING_PHRASES and not find_urls(text))


def is_conversational(text: str, keywords: Iterable[str] = (), *, max_words: int = 3, max_chars: int = 15,
                      follow_up: bool = False) -> bool:
    """True when ``text`` is conversation and no tool should be offered.

    Parameters
    ----------
    text : str
        The cleaned message.
    keywords : iterable of str
        Tool keywords (lower case); one of them in a short message makes it a request.
    max_words, max_chars : int
        Knobs ``short_max_words`` / ``short_max_chars`` (DESIGN.md: <= 3 words or <= 15 chars).
    follow_up : bool
        The message continues a dialog (an earlier user turn exists): short input is then a
        follow-up ("and tomorrow?", "do that again"), and only a greeting is conversation.

    Notes
    -----
    Whole-message greeting first (exact match after normalising), then the short-input rule.
    A URL or a tool keyword always makes it a request.
    """
    norm = _normalise_for_greeting(text)
    if not norm:
        return True
    if find_urls(text):
        return False
    if norm in _GREETING_PHRASES:
        return True
    if follow_up:
        return False
    words = _WORD_RE.findall(norm)
    short = len(words) <= max_words or len(text.strip()) <= max_chars
    if not short:
        return False
    keywords = set(keywords)
    for word in words:
        if word in keywords or (word.endswith("s") and word[:-1] in keywords):
            return False
    return True


def fetch_tool(catalog: Catalog) -> str:
    """The catalogue's page-fetch tool: ``web:fetch`` if present, else a tool named with "fetch".

    Returns ``""`` when the catalogue has none (then URLs force nothing).
    """
    if "web:fetch" in catalog:
        return "web:fetch"
    candidates = [t.name for t in catalog if "fetch" in name_words(t.name)]
    preferred = [n for n in candidates if {"web", "url", "page", "http"} & set(name_words(n))]
    return (preferred or candidates or [""])[0]


def names_domain(text: str, domain: str) -> bool:
    """True when ``text`` names ``domain`` as a word (case-insensitive)."""
    return bool(domain) and re.search(rf"(?i)\b{re.escape(domain)}\b", text) is not None
