"""Cheap lexical guards that run before (and instead of) embedding.

* Conversation: empty input, a whole-message greeting or thanks, or short input (few words or
  few characters) that carries no URL and no tool keyword is conversation: nothing is offered.
  The greeting match is whole-message only (trim, lower-case, strip punctuation), so
  "hey, fix the login bug" keeps its task (reported case route-14; fix from the PR behind route-13).
* URLs: a URL or a domain-like token forces the catalogue's fetch tool at score 1.0, as does a
  page phrase such as "open the page" (never the bare verb "open").
* Scripts: text written without spaces between words (Chinese, Japanese, Thai...) counts words
  by characters (:func:`word_count`), and text in a script the lab cannot read (mostly letters
  outside the Latin alphabet: its keyword lists and the bundled MiniLM are English and German) is
  conversation only when it is a known greeting: a request is never met with nothing (issue 16,
  bad input row 6). :func:`lexical_terms` gives lexical strategies character bigrams for them.
* Dialog shape: :func:`clauses` splits a message that joins several requests ("grab X and store
  it as Y"), :func:`sentence_parts` splits one that asks in several sentences ("First, ... Then,
  ..."), :func:`names_duration` tells a duration from a point in time (countdown tools), and
  :func:`catch_all_tools` finds run-anything tools that fit every request (reported case route-26).
* Text hygiene: control characters removed, Unicode NFC, whitespace collapsed, length capped.
* Spelling: :func:`spelling_fixes` maps a misspelt word to the catalogue word one edit away
  ("battrey" -> "battery"); the router scores the fixed text beside the message.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Any, Callable, Iterable, Mapping, Sequence

from .catalog import Catalog, lexical_text, name_words, routing_phrases
from .errors import ErisLabError
from .lexicon import (DONE_REPORT_RE, FOREIGN_CUES, FOREIGN_GLOSSES, PROBLEM_REPORT_RE, SUPPORT_TOOL_RE, QUESTION_WORDS, CHAT_SPELLINGS, DURATION_UNITS, BILLING_COMPLAINTS, ENGLISH_CUES, ENGLISH_CUES_DUTCH, ENGLISH_CUES_SHARED, ENGLISH_HOMOGRAPHS, FIGURATIVE_IDIOMS, GERMAN_CUES, GERMAN_GLOSSES,
                      GREETINGS, KEYWORD_STOPWORDS, STOPWORDS, REMINDER_IDIOMS, WEATHER_QUESTIONS, SMALL_TALK, SMALL_TALK_TAILS, VENTING_PHRASES,
                      VENTING_WORDS, WRITTEN_BY_THE_MODEL, LANGUAGE_NAMES, LANGUAGE_TOOL_STEMS, READ_VERBS, WRITE_VERBS,
                      ACTION_WORDS)

__all__ = [
    "clean_text",
    "find_urls",
    "unread_language",
    "IMPERSONAL_IT_RE",
    "foreign_by_letters",
    "words_unread",
    "is_conversational",
    "only_short",
    "names_code",
    "asks_about_language",
    "is_language_question",
    "language_tools",
    "is_greeting",
    "is_small_talk",
    "without_venting",
    "only_vents",
    "plain_gerund",
    "without_condition",
    "reports_done",
    "only_reports_done",
    "logging_tools",
    "without_negated",
    "venting_apart",
    "without_payload",
    "quoted_payloads",
    "read_existence",
    "read_code_question",
    "one_edit_apart",
    "read_addresses",
    "read_idioms",
    "read_weather",
    "without_pointers",
    "without_greeting",
    "tool_keywords",
    "fetch_tool",
    "page_phrase",
    "names_domain",
    "word_count",
    "unread_script",
    "mostly_german",
    "lexical_terms",
    "german_stem",
    "clauses",
    "names_duration",
    "countdown_tools",
    "catch_all_tools",
    "asking_tools",
    "SpellingIndex",
    "spelling_index",
    "spelling_fixes",
    "apply_spelling",
    "known_words",
    "FORCED_SCORE",
]

FORCED_SCORE = 1.0  # score of a lexically forced hit (DESIGN.md: URL = web:fetch at 1.0)


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
_WORD_RE = re.compile(r"\w+", re.UNICODE)
#: Two numbers joined by an arithmetic operator ("443 * 349", "2+2", "7 x 8", "3^4"): a request
#: however short (live_multiple_194-87-1, "compute 443 * 349", was met as conversation). "-" and
#: "/" are left out: they join the parts of dates and phone numbers ("12/25", "2026-12-01").
_ARITHMETIC_RE = re.compile(r"\d\s*(?:[+*^×÷]|x(?=\s*\d))\s*[-(]?\d")
#: Tool keywords of a calculator: only beside one is a bare expression a request ("What is 2*3?"
#: beside three vehicle-headway tools is BFCL live_irrelevance_271-57-6).
_ARITHMETIC_KEYWORD_RE = re.compile(r"calc|comput|math|arithm|multipl|product|subtract|divi|sum|plus|minus|times")
#: A quantity with its unit asked in another unit ("12 km in miles?", "150 USD to EUR", "5 ft in
#: cm", "30 Grad in Fahrenheit"): beside a converter's keyword a request, however short (round
#: fifteen's variants, 2026-12-07: both were conversation by the short-input rule).
_CONVERSION_RE = re.compile(r"(?i)\d[\d.,]*\s*[^\W\d_]{1,12}\.?\s+(?:in|to|into|as|en|nach|zu)\s+[^\W\d_]{1,12}\b"
                            r"|(?:[$€£¥])\s*\d[\d.,]*\s+(?:in|to|into)\s+[^\W\d_]{1,12}\b")
_CONVERSION_KEYWORD_RE = re.compile(r"conver|exchang|currenc|unit|umrechn|wechselkurs")

#: Scripts written without spaces between words: Han, kana, Thai, Lao, Khmer, Myanmar (and Hangul
#: syllables, spaced by phrase rather than by word, for n-grams only). ``(class, chars per word)``.
_CJK = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_SOUTHEAST = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
_HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
_SPACELESS_RE = re.compile(f"[{_CJK}]+|[{_SOUTHEAST}]+")
_NGRAM_RE = re.compile(f"[{_CJK}{_SOUTHEAST}{_HANGUL}]+")
#: Mean characters per word: about 1.6 for Chinese and Japanese word segmentations (SIGHAN
#: bakeoff corpora), so 2 is a generous count; Thai words run longer (about 4 in BEST/ORCHID).
_CHARS_PER_WORD = {True: 2, False: 4}



#: A phrase of whole words (3 to 200 characters, ending in a space) said three or more times in a row.
_REPEAT_RE = re.compile(r"(?<!\S)(\S.{1,198}?\s)\1{2,}")


# a chat spelling stands alone: not inside a path, a URL, a file name or a hyphenated word
_CHAT_SPELLING_RE = re.compile(
    r"(?i)(?<![\w/.\-@])(" + "|".join(sorted(map(re.escape, CHAT_SPELLINGS), key=len, reverse=True))
    + r")(?![\w/\-@]|\.\w)")


def read_chat_spellings(text: str) -> str:
    """``text`` with :data:`~eris_lab.lexicon.CHAT_SPELLINGS` written out ("can u get me moar?" ->
    "can you get me more?"); a word inside a path, URL or hyphenated word stays as it is."""
    return _CHAT_SPELLING_RE.sub(lambda m: CHAT_SPELLINGS[m.group(1).lower()], text)


def clean_text(text: str, max_chars: int = 0) -> str:
    """Normalise a raw message: NFC, control characters dropped, whitespace collapsed, chat
    spellings written out (:func:`read_chat_spellings`), cut to ``max_chars``.

    Parameters
    ----------
    text : str
    max_chars : int
        0 = no cut. The cut keeps the start (the request usually comes first) and the last
        quarter of ``max_chars`` (a request after a pasted text), joined by " ... "; a cut message
        also has phrases repeated three or more times in a row kept once (bad input row 31: a
        115 kB message repeating "set an alarm for seven" embedded as noise and got no tool).
    """
    text = unicodedata.normalize("NFC", text or "")
    text = text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
    text = _CONTROL_RE.sub("", text)
    text = read_chat_spellings(" ".join(text.split()))
    return _cut(text, max_chars) if max_chars and len(text) > max_chars else text


def _cut(text: str, max_chars: int) -> str:
    """The start and the last quarter of ``max_chars`` of a long message (:func:`clean_text`)."""
    start = len(text) - max_chars // 4
    if text[start - 1] != " ":  # from a word's start: the next one, or the last word's own
        after, before = text.find(" ", start), text.rfind(" ", start - 40, start)
        start = after + 1 if after >= 0 else before + 1 if before >= 0 else start
    tail = text[start:]
    head = _REPEAT_RE.sub(r"\1", text[:max_chars - max_chars // 4] + " ").strip()
    tail = _REPEAT_RE.sub(r"\1", tail + " ").strip()
    return head if tail in head else f"{head} ... {tail}"


def find_urls(text: str) -> tuple[str, ...]:
    """URLs and domain-like tokens (``example.org/changelog``) in ``text``, in order; file names are not."""
    return tuple(m.group(0).rstrip(".,;:!?)]}") for m in _URL_RE.finditer(text))


#: A file path that names a file, not a topic: from the root, home or here (``/etc/hosts``,
#: ``./config/local.yaml``), or folders with a file name (``data/users.json``) or two folders deep;
#: one segment holds a letter ("12/05/2026" and "24/7" are no paths, "and/or" and "km/h" neither).
_FILE_PATH_RE = re.compile(
    r"(?<![\w:/.])(?:(?:\.{1,2}/|~/|/)[\w.\-]*[A-Za-z][\w.\-]*(?:/[\w.\-]+)*"
    r"|[\w.\-]+(?:/[\w.\-]+)+\.[A-Za-z]\w{0,4}|[\w.\-]*[A-Za-z][\w.\-]*(?:/[\w.\-]+){2,})(?=[\s,;!?)]|\.?$)")


def addresses_apart(text: str) -> tuple[str, str]:
    """``text`` with each URL cut to its host and each file path read as "a file", and the cut-off
    address text; ``("", "")`` when there is neither.

    What an address spells is no request: the folders and file names of
    "download https://raw.githubusercontent.com/acme/cfg/main/config.yaml and save it to
    ./config/local.yaml" pulled a level tool (0.52) above the file writer (0.51) into the offer
    (a helper's variant f10-r43 of case route-26). The router holds what the address text alone
    pulls to what the request gives (:func:`router.without_pull`, as for a quoted payload), so the
    host ("youtube.com", "hooks.slack.com") still names its service.
    """
    spelled: list[str] = []

    def host_only(match: re.Match[str]) -> str:
        url = match.group(0).rstrip(".,;:!?)]}")
        head = re.match(r"(?i)(?:[a-z][a-z0-9+.\-]*://)?[^/?#\s]+", url)
        if head is None or head.end() >= len(url):
            return match.group(0)
        spelled.append(url[head.end():])
        return head.group(0) + match.group(0)[len(url):]

    def a_file(match: re.Match[str]) -> str:
        spelled.append(match.group(0))
        return "a file"

    request = _URL_RE.sub(host_only, text)
    request = _FILE_PATH_RE.sub(a_file, request)
    spelled = [s for s in spelled if re.search(r"[A-Za-z]{2}", s)]
    return (request, " ".join(spelled)) if spelled else ("", "")


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
    # the German words glossed as one of them, and their stems ("Spiel etwas Jazz" beside play_music
    # was conversation: three words, none of them English; a new user's trial)
    for key, gloss in GERMAN_GLOSSES.items():
        if key not in ENGLISH_HOMOGRAPHS and words.intersection(gloss.split()):
            stem = german_stem(key)
            words.update((key, stem) if len(stem) >= 5 and stem not in GERMAN_CUES else (key,))
    return frozenset(words)


def german_stem(word: str) -> str:
    """The Snowball stem of a lower-case German word ("spiele" -> "spiel"; snowballstemmer)."""
    return _german_stemmer().stemWord(word)


@functools.cache
def _german_stemmer():
    import snowballstemmer  # small, pure Python; imported on the first German word stemmed

    return snowballstemmer.stemmer("german")


def _normalise_for_greeting(text: str) -> str:
    # punctuation, symbols and separators become spaces; combining marks (Thai vowels) stay
    return " ".join("".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in text.lower()).split())


_GREETING_PHRASES = frozenset(
    _normalise_for_greeting(line) for line in GREETINGS
) | frozenset(_normalise_for_greeting(w) for line in GREETINGS for w in line.split())


_SMALL_TALK = frozenset(_normalise_for_greeting(line) for line in SMALL_TALK if line.strip())
_SMALL_TALK_TAILS = frozenset(_normalise_for_greeting(line) for line in SMALL_TALK_TAILS if line.strip())
_SMALL_TALK_MAX_WORDS = max(len(p.split()) for p in _SMALL_TALK | _SMALL_TALK_TAILS)
_GREETING_WORDS = frozenset(_normalise_for_greeting(w) for line in GREETINGS for w in line.split()) - {"no", "yes", "test"}


#: Thanks for something, the whole message ("thanks for the help with the calendar earlier!",
#: "thanks for the music tip yesterday!"): naming a tool's subject asks nothing of it (a helper's
#: variants of route-20, 2026-12-05: offered the calendar's and the media tools).
_THANKS_FOR_RE = re.compile(
    r"^(?:(?:ok|okay|oh|hey|great|cool|awesome|perfect)\s+)*(?:thanks|thank you|thank u|thx|ty|many thanks|cheers|danke|"
    r"vielen dank|merci|gracias|grazie|wish me luck|fingers crossed|drück mir die daumen)(?:\s+(?:so much|a lot|again|anyway|very much|a ton))?"
    r"(?:\s+(?:for|für|pour|por|per|on|with|bei)\s+\S.*)?$")
#: What turns such thanks into a request: a question or a request word ("thanks! now book it").
_THANKS_THEN_ASKS_RE = re.compile(r"[?]|\b(?:but|now|can you|could you|please)\b", re.IGNORECASE)


#: A remark about the assistant, one word after its modifiers ("you're a lifesaver", "you are so
#: helpful", "you've been incredibly patient", "du bist echt klasse"): said to it, never a request
#: of a tool (round twelve's variants of route-20, 2026-12-06: "You're a lifesaver!" was offered 14
#: tools; the phrase list held "you're the best" and "you're a star" only; round thirteen's added
#: adverbs in -ly and "you've been"). Read on :func:`_normalise_for_greeting` text.
_YOU_ARE_RE = re.compile(
    r"(?:you re|youre|you are|ur|u r|you ve been|youve been|you have been|you were|you re being|"
    r"du bist|du warst|tu es|vous êtes|vous etes|eres|sei|je bent|jij bent) "
    r"(?:(?:a|an|the|so|such|really|truly|totally|absolutely|just|real|true|total|great|big|ein|eine|einfach|"
    r"echt|wirklich|ja|un|une|vraiment|trop|el|la|una|uno|muy|davvero|proprio|molto|een|heel|"
    r"[^\W\d_]+ly) )*"
    r"[^\W\d_]+(?= |$)")

#: Praise of something the assistant did ("that reminder was perfect", "the summary was really
#: helpful", "your answer was spot on"): small talk however its noun names a tool (round fifteen's
#: variants, 2026-12-07: "thanks, that reminder was perfect" was offered the reminder tools). How
#: it went ("the timer worked perfectly", "the payment went through", "the alarm woke me right on
#: time", "that conversion came in handy", "der Timer hat super funktioniert") and praise with its
#: object ("nice work with the playlist") too: rounds sixteen and seventeen, each offered the tool.
#: The object is two words at most and no command verb: "great job on the playlist, play it again"
#: asks (round seventeen's guard).
_PRAISE_WORD = r" (?!(?:not|never|no|t|didn|wasn|isn|doesn|won|hasn|haven)(?: |$))[^\W\d_]+"  # no negation
_PRAISED = r"(?:that|the|this|those|these|your|my)(?:" + _PRAISE_WORD + r"){1,6}?"
_PRAISE_ADVERBS = r"(?:(?:so|really|very|just|absolutely|super|pretty|totally|exactly|truly|quite) )*"
_COMMAND_VERB = (r"(?:play|set|send|add|remove|delete|make|put|show|find|open|start|stop|turn|call|book|remind|tell|"
                 r"read|write|create|move|cancel|check|get|give|save|email|text|skip|pause|repeat|do)")
_PRAISE_RE = re.compile(
    r"(?:" + _PRAISED + r"|it|that|this) (?:was|is|were|are|worked|works) " + _PRAISE_ADVERBS
    + r"(?:perfect|great|helpful|brilliant|excellent|spot on|awesome|amazing|fantastic|useful|lovely|ideal|"
    r"right|fine|good|nice|wonderful|handy|what i needed|a lifesaver|a life saver|a godsend|a big help|a great help|"
    r"a hit(?: with (?:the |my |our )?[^\W\d_]+)?|a (?:big |huge |real )?(?:triumph|success|winner|treat)|delicious|"
    r"tasty|yummy)(?= |$)"
    # who enjoyed it: "my family loved it", "everyone enjoyed them" (round eighteen's variants, 2026-12-07:
    # "that soup recipe was a triumph, my family loved it" was offered four recipe tools)
    r"|(?:(?:my|our|the) [^\W\d_]+(?: [^\W\d_]+)?|everyone|everybody|we|they|the kids) (?:all |really |absolutely )?"
    r"(?:loved|liked|enjoyed|adored) (?:it|them|that|this)(?= |$)"
    r"|(?:" + _PRAISED + r"|it) (?:worked|works|went|came in|came|turned out|went down) " + _PRAISE_ADVERBS
    + r"(?:perfectly|great|fine|well|smoothly|like a charm|through|without a hitch|in handy|handy|a treat)(?= |$)"
    r"|" + _PRAISED + r" (?:worked|did the trick|did its job)$"
    r"|" + _PRAISED + r"(?:" + _PRAISE_WORD + r"){1,3}? (?:(?:right|just|bang) )?(?:on time|in time|in no time|on cue)(?= |$)"
    r"|(?:nice|great|good|excellent|brilliant|awesome) (?:work|job) (?:with|on) (?:that|the|this|those|these|your|my) "
    r"(?:(?!" + _COMMAND_VERB + r" )[^\W\d_]+ )?(?!" + _COMMAND_VERB + r"(?: |$))[^\W\d_]+(?= |$)"
    r"|(?:der|die|das|dein|deine|es)(?: [^\W\d_]+){0,3} (?:hat|war|ist|lief) (?:(?:super|echt|wirklich|total|sehr|"
    r"richtig|einfach) )*(?:funktioniert|geklappt|perfekt|super|toll|prima|hilfreich|klasse|gut|spitze)(?= |$)")


def is_small_talk(text: str) -> bool:
    """True for a whole message of small talk addressed to the assistant: greeting words and
    :data:`~eris_lab.lexicon.SMALL_TALK` phrases, nothing else ("hey, how are you?", "thanks, that
    was really helpful!", "thank you so much, you're the best", "never mind").

    Read left to right, each step taking a greeting word or the longest phrase that starts there
    (after the first step also a :data:`~eris_lab.lexicon.SMALL_TALK_TAILS` phrase, "so much",
    "again"), a remark about the assistant (:data:`_YOU_ARE_RE`, "you're a lifesaver") or praise of
    what it did (:data:`_PRAISE_RE`, "that reminder was perfect"); one word
    of anything else ("thanks, now set an alarm") makes it a request.
    """
    words = _normalise_for_greeting(text).split()
    if not words or all(w in _GREETING_WORDS for w in words):
        return False  # a bare greeting is is_greeting's (and "ok" alone is no small talk)
    if _THANKS_FOR_RE.match(" ".join(words)) and not _THANKS_THEN_ASKS_RE.search(text):
        return True
    i = 0
    while i < len(words):
        known = _SMALL_TALK | _SMALL_TALK_TAILS if i else _SMALL_TALK  # a tail extends what came before
        step = next((n for n in range(min(len(words) - i, _SMALL_TALK_MAX_WORDS), 0, -1)
                     if " ".join(words[i:i + n]) in known), 0)
        # the longer reading wins: "nice work" is a phrase, "nice work with the playlist" praise
        if said := _YOU_ARE_RE.match(" ".join(words[i:])) or _PRAISE_RE.match(" ".join(words[i:])):
            step = max(step, len(said.group(0).split()))
        if not step and words[i] not in _GREETING_WORDS:
            return False
        i += step or 1
    return True


_ASK_TO_WRITE_RE = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you|will you|bitte|kannst du|könntest du)\s+)*"
    r"(?:tell|give|write|compose|make up|sing\w*|recite|read|invent|erzähl\w*|erzaehl\w*|schreib\w*|dicht\w*)"
    r"\s+(?:(?:me|us|mir|uns)\s+)?(?:a|an|another|one|some|one more|a little|a short|a funny|ein|eine|einen|noch)\b"
    r"(?P<rest>.*)$")


#: Text handed over to be rewritten ("rewrite this sentence to sound more polite: ...", "summarize
#: this paragraph: ..."), ideas or names asked for ("give me three name ideas for a podcast", "what's
#: a good name for a cat?") and games ("let's play twenty questions"): the model answers them
#: itself (a helper's variants of route-20, 2026-12-05: each was offered 5 to 10 tools).
_MODEL_WORK_RES = tuple(re.compile(p) for p in (
    r"^(?:(?:please|pls|can you|could you|would you|bitte|kannst du)\s+)*(?:rewrite|rephrase|paraphrase|reword|"
    r"summari[sz]e|proofread|shorten|simplify|polish|correct|improve|fix the grammar of|fix the grammar in|"
    r"formuliere|fasse|korrigiere)\s+(?:this|the following|these|my|the|diesen|diese|den|die)\s+"
    r"(?:sentence|sentences|paragraph|paragraphs|text|passage|line|lines|phrase|wording|draft|satz|absatz|text)\b",
    r"^(?:(?:please|pls|can you|could you|would you)\s+)*(?:give|suggest|brainstorm|come up with|think of)\s+"
    r"(?:me\s+|us\s+)?(?:(?:a few|a couple of|some|more|several|\d+|two|three|four|five|six|seven|eight|nine|ten)\s+)?"
    r"(?:good\s+|catchy\s+|funny\s+|creative\s+)?(?:names?|name ideas|ideas|titles?|slogans?|nicknames?|taglines?)\b",
    r"^(?:what(?: s| is| are)|whats)\s+(?:a\s+|some\s+)?(?:good|nice|cute|funny|catchy|cool)\s+(?:names?|titles?|"
    r"nicknames?|slogans?)\s+for\b",
    r"^(?:let s|lets|let us|shall we|wanna|want to)\s+play\s+(?:a\s+)?(?:game|twenty questions|20 questions|trivia|"
    r"would you rather|i spy|rock paper scissors|word game|riddle|riddles|a guessing game|hangman|truth or dare)\b",
))


#: Words that open a clause asking nothing of a tool after a writing request: more of the
#: writing ("and a riddle"), its style ("and make it rhyme", "keep it short").
_WRITING_CLAUSE_OPENERS = frozenset("""a an the one another some more and or but with about for in on of it that this
    make keep please thanks thank so also too again und aber mach mache bitte danke noch ein eine einen""".split())


def _asks_a_tool(clause: str) -> bool:
    """Whether a clause after a writing request opens with a verb of its own ("set an alarm for 7",
    "email it to Jo", "remind me at 5"; round seventeen's guards, 2026-12-07: conversation before)."""
    words = _normalise_for_greeting(clause).split()
    return bool(words) and words[0] not in _WRITING_CLAUSE_OPENERS and words[0] not in WRITTEN_BY_THE_MODEL


def asks_for_writing(text: str, keywords: Iterable[str] = ()) -> bool:
    """True for a request that the model fulfils by writing ("tell me a bedtime story about a
    dragon", "write me a poem about autumn", "Erzähl mir einen Witz"): a verb of telling or writing,
    then an article and one of :data:`~eris_lab.lexicon.WRITTEN_BY_THE_MODEL` within four words.
    False when a tool keyword names that thing (a jokes API's ``get_joke``): then a tool can serve it;
    and when a later clause asks a tool (:func:`_asks_a_tool`, "write a haiku and email it to Jo").
    """
    if any(_asks_a_tool(part) for part in clauses(text)[1:]):
        return False  # "tell me a joke and then set an alarm for 7": the alarm is a tool's
    norm = _normalise_for_greeting(text)
    if any(p.match(norm) for p in _MODEL_WORK_RES):
        return True
    match = _ASK_TO_WRITE_RE.match(norm)
    if not match:
        return False
    head = match.group("rest").split()[:4]
    things = {w for w in head if w in WRITTEN_BY_THE_MODEL}
    keywords = keywords if isinstance(keywords, (set, frozenset)) else set(keywords)
    return bool(things) and not any(t in keywords or singular(t) in keywords for t in things)


_LANGUAGE = "(?:" + "|".join(sorted(LANGUAGE_NAMES, key=len, reverse=True)) + ")"
#: The words a language question is about: a quoted span (an apostrophe may stand inside single
#: quotes: 'it's raining cats and dogs'), or one to three plain words.
_ABOUT = r"""(?:(?:the\s+)?(?:word|phrase|term|expression|sentence|wort|ausdruck|satz)\s+)?(?:'[^\n]+?'|"[^"]+"|‘[^’]+’|“[^”]+”|„[^“”]+[“”]|«[^»]+»|[^\s'"]+(?:\s+[^\s'"]+){0,2})"""
_LANGUAGE_OPENERS = r"(?:(?:hey|hi|hello|ok|okay|so|please|pls|bitte|quick question)\W+)*(?:(?:can|could|would) (?:you|u) (?:please )?(?:tell me )?|do you know |kannst du (?:mir )?(?:sagen )?)?"
#: A question about words that the model answers itself: a translation, a meaning, a spelling
#: (a helper's variants of quoted payloads, 2026-12-05: "how do you say 'delete all my emails'
#: in Italian?" offered calendar:delete). Each pattern reads the whole message.
_LANGUAGE_QUESTION_RES = tuple(re.compile(r"(?is)^\W*" + _LANGUAGE_OPENERS + p + r"(?:\W+(?:please|pls|bitte|thanks|thank you|danke))?\W*$")
                               for p in (
    # translate X (into French) / übersetze X ins Englische
    r"(?:translate|übersetze?n?|uebersetze?n?)\b(?:\s+(?:this|that|it|me|for me|mir|das|dies))?\s*:?\s*" + _ABOUT
    + r"(?:\s+(?:from\s+" + _LANGUAGE + r"\s+)?(?:in|into|to|ins|auf|in das|nach)\s+" + _LANGUAGE + r")?",
    r"(?:translate|übersetze?n?|uebersetze?n?)\s+(?:from\s+" + _LANGUAGE + r"\s+)?(?:in|into|to|ins|auf|nach)\s+" + _LANGUAGE
    + r"(?:\s*:\s*.+|\s+" + _ABOUT + ")",  # after a colon, any text is what to translate
    # how do you say X in Italian / how do I spell X / how is X pronounced
    r"how (?:do|would|can|could|should) (?:you|i|we|one|u|people) (?:say|write|translate)\s+" + _ABOUT
    + r"\s+(?:in|into)\s+" + _LANGUAGE,
    r"how (?:do|would|can|could|should) (?:you|i|we|one|u|people) (?:spell|pronounce)\s+" + _ABOUT
    + r"(?:\s+(?:in|into)\s+" + _LANGUAGE + r")?",
    r"how (?:is|are|do you) " + _ABOUT + r" (?:spelled|spelt|pronounced|written|spell|pronounce)(?:\s+in\s+" + _LANGUAGE + r")?",
    # define X / what does X mean (in German) / what is the meaning of X / what's X in French
    r"define (?:the (?:word|term) )?(?:'[^\n]+?'|\"[^\"]+\"|[A-Za-zÄÖÜäöüß-]+)",  # one word: "define the interface" is code
    r"what (?:does|do) " + _ABOUT + r" mean(?:\s+(?:in|auf)\s+" + _LANGUAGE + r")?",
    r"what(?:'s|’s| is| are) (?:the )?(?:meaning|definition|translation) of " + _ABOUT
    + r"(?:\s+(?:in|into)\s+" + _LANGUAGE + r")?",
    r"what(?:'s|’s| is| are) (?:the )?(?:" + _LANGUAGE + r" )?(?:word|term|phrase|expression|translation)s? for "
    + _ABOUT + r"(?:\s+in\s+" + _LANGUAGE + r")?",
    r"what(?:'s|’s| is) " + _ABOUT + r" in " + _LANGUAGE,
    # what rhymes with X / a synonym for X / the opposite of X / how many syllables in X (a helper's
    # variants of route-20, 2026-12-05: "what rhymes with timer?" offered the clock tools)
    r"(?:what|which (?:words?|ones?))\s+rhymes?\s+with\s+" + _ABOUT,
    r"(?:what(?:'s|’s| is| are)\s+|give me\s+|tell me\s+)?(?:an?\s+|the\s+|some\s+)?(?:other\s+)?"
    r"(?:synonyms?|antonyms?|opposites?|rhymes?|another word)\s+(?:for|of|to)\s+" + _ABOUT,
    r"how many syllables (?:are )?(?:in|does|has) " + _ABOUT + r"(?: have)?",
    r"was reimt sich auf " + _ABOUT,
    # Was bedeutet X (auf Englisch)? / Was heißt X auf Englisch? / Wie sagt man X auf Französisch?
    r"was (?:bedeutet|bedeuten|heißt|heisst) " + _ABOUT + r"(?:\s+(?:auf|in|im)\s+" + _LANGUAGE + r")?",
    r"wie (?:sagt|schreibt|spricht) man " + _ABOUT + r"(?:\s+(?:auf|in|im)\s+" + _LANGUAGE + r")?(?:\s+aus)?",
))


def is_language_question(text: str) -> bool:
    """Whether ``text`` is a question about words (a translation, a meaning, a spelling), whatever
    the catalogue: :func:`asks_about_language` without its tool check."""
    text = " ".join(text.replace("’", "'").split())
    return any(p.match(text) for p in _LANGUAGE_QUESTION_RES)


def language_tools(catalog: Catalog) -> tuple[str, ...]:
    """Tools that serve a question about words: a name word or keyword starting with one of
    :data:`~eris_lab.lexicon.LANGUAGE_TOOL_STEMS` (``translate_text``, ``dictionary_lookup``).

    The router forces them for a question about words (:func:`is_language_question`): "what does
    'serendipity' mean?" beside ``dictionary_lookup`` was refused by the relevance gate (a helper's
    variants, 2026-12-05)."""
    return catalog.derived("guard.language_tools", _language_tools)


def _language_tools(catalog: Catalog) -> tuple[str, ...]:
    return tuple(t.name for t in catalog
                 if any(w.lower().startswith(LANGUAGE_TOOL_STEMS) for w in (*name_words(t.name), *t.keywords)))


def asks_about_language(text: str, keywords: Iterable[str] = ()) -> bool:
    """True for a question about words that the model answers itself: a translation, a meaning, a
    spelling ("how do you say 'delete all my emails' in Italian?", "translate 'set an alarm' to
    French", "what does 'carpe diem' mean?", "Was bedeutet „Wecker stellen“ auf Englisch?").

    The words asked about are quoted or one to three plain words, and the whole message is the
    question ("translate this email and send it to Bob" is not). False when a tool's name word or
    keyword serves language (:data:`~eris_lab.lexicon.LANGUAGE_TOOL_STEMS`: ``translate_text``,
    ``dictionary_lookup``): then a tool can answer it.

    Notes
    -----
    The quoted words are no request: without this rule their tools were offered, or the rest of
    the message ("how do you say ... in Italian?") was scored alone and pulled the calendar.
    """
    return is_language_question(text) and not any(k.startswith(LANGUAGE_TOOL_STEMS) for k in keywords)


def _greeting_only(text: str) -> bool:
    """Every word of ``text`` is a greeting word ("Hey, good morning.")."""
    words = _normalise_for_greeting(text).split()
    return bool(words) and all(w in _GREETING_WORDS for w in words)


def is_greeting(text: str) -> bool:
    """True for empty input or a whole-message greeting, thanks or ping (:data:`~eris_lab.lexicon.GREETINGS`)."""
    norm = _normalise_for_greeting(text)
    return not norm or (norm in _GREETING_PHRASES and not find_urls(text))


#: A file name with a common extension ("report.txt", "notes/today.md"): like a URL, it makes a short
#: message a request ("delete 'report.txt'" and "read report.txt" were conversation: two words, and
#: no tool keyword; a helper's variants, 2026-12-04).
_FILE_NAME_RE = re.compile(
    # a name starts where a run of name characters starts: "a-a-a-..." (every letter after a dash a
    # start) was quadratic, 3 s at 16 kB
    r"(?i)(?<![\w@.\-])[\w\-]++(?:/[\w\-]++)*+\.(?:txt|md|pdf|csv|tsv|json|jsonl|docx?|odt|rtf|xlsx?|ods|pptx?|py|js|ts|"
    r"html?|xml|ya?ml|toml|ini|cfg|log|png|jpe?g|gif|svg|webp|zip|tar|gz|mp3|mp4|wav|epub|ipynb)\b")


#: A name from code: snake_case, camelCase, PascalCase of two words or more, a dunder name, a
#: dotted member or a call ("parse_config", "getUserById", "TokenBucket", "__init_subclass__",
#: "HttpClient.send", "main()").
_CODE_NAME_RE = re.compile(
    r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b"
    r"|(?<!\w)__[A-Za-z]\w*__(?!\w)|\b[A-Za-z_]\w*\.[a-z_]\w*\(?\)?(?=[\s?!,;:]|$)|\b[A-Za-z_]\w*\(\)")


#: A question where code is defined or used ("where is parse_config defined?", "who calls
#: getUserById?", "which module defines class TokenBucket?", "Wo wird load_settings aufgerufen?"):
#: a code search, whatever the thin tools' words (a helper's variants of case route-14, 2026-12-05).
_CODE_QUESTION_RES = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"^\W*(?:hi|hey|morning|ok|so)?\W*where(?:'s| is| are| do we| does)\s+(?:the\s+)?(?:implementation\s+of\s+)?"
    r"(?:(?:function|method|class|constant|variable|module|type|struct|interface)\s+)?(?P<name>\S+)"
    r"(?:\s+(?:\w+\s+){0,3}(?:defined|declared|implemented|used|called|imported|set|handled|raised))?",
    r"^\W*(?:who|what)\s+(?:calls|uses|imports|references|overrides|raises)\s+(?P<name>\S+)",
    r"^\W*(?:which|what)\s+(?:module|file|class|package|function)s?\s+(?:defines|implements|declares|contains|"
    r"calls|uses|imports)\s+(?:(?:the\s+)?(?:function|method|class|constant|type)\s+)?(?P<name>\S+)",
    r"^\W*wo\s+(?:wird|werden|ist|sind)\s+(?:die\s+(?:funktion|methode|klasse|konstante)\s+|der\s+typ\s+)?(?P<name>\S+)"
    r"(?:\s+\w+){0,3}\s+(?:definiert|deklariert|implementiert|aufgerufen|verwendet|benutzt|importiert)",
))


#: A question where our code does something, in plain words ("where's our retry logic for the HTTP
#: client?", "where do we handle token refresh?"): a code search too, though it names nothing from
#: code. The thing asked about must hold a word of code (:data:`_CODE_NOUN_RE`) or the verb one of
#: code's actions (:data:`_CODE_VERB_RE`): "where's our nearest office?" asks no code search (a
#: helper's variants of route-14, 2026-12-05: the gate refused the first).
_OWN_CODE_QUESTION_RES = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"^\W*(?:(?:hi|hey|morning|ok|so)\W+)?where(?:'s|s| is| are)\s+(?:our|the)\s+(?P<name>[^?]+)",
    r"^\W*(?:(?:hi|hey|morning|ok|so)\W+)?where\s+(?:do|did|does|should)\s+(?:we|our code|the code(?:base)?|the app)"
    r"\s+(?P<verb>\w+)\s+(?P<name>[^?]+)",
))
_CODE_NOUN_RE = re.compile(
    r"(?i)\b(?:logic|code|codebase|handler|handling|implementation|function|method|class|module|endpoint|middleware|"
    r"tests?|config|configuration|parser|client|service|hook|query|migration|schema|script|api|controller|component|"
    r"utils?|utility|helper|wrapper|decorator|validator|serializer|interface|library|package|regex|callback|cache|"
    r"retry|retries|auth|authentication|token|tokens|bug|exception|error handling|pipeline|job|worker|cron|webhook)\b")
_CODE_VERB_RE = re.compile(
    r"(?i)^(?:handle|parse|validate|store|compute|check|build|create|load|call|define|implement|retry|log|cache|"
    r"serialize|deserialize|initialize|init|register|configure|authenticate|render|route|dispatch|catch|raise|throw|"
    r"test|mock|hash|encrypt|decrypt|sanitize|escape|format|refresh|invalidate|fetch|set)$")


def read_code_question(text: str) -> str:
    """``"search the code for NAME"`` when ``text`` asks where a name from code (:func:`names_code`)
    is defined or used, or where our code does something (:data:`_OWN_CODE_QUESTION_RES`), else
    ``""``. The router scores this reading beside the message, so it can raise a code search's
    score, never lower one."""
    for pattern in _CODE_QUESTION_RES:
        match = pattern.match(text)
        if match and names_code(match.group("name")):
            return f"search the code for {match.group('name').strip('?.,!`')}"
    for pattern in _OWN_CODE_QUESTION_RES:
        match = pattern.match(text)
        if match is None:
            continue
        verb = match.groupdict().get("verb") or ""
        if _CODE_NOUN_RE.search(match.group("name")) or _CODE_VERB_RE.match(verb):
            return f"search the code for {' '.join(filter(None, (verb, match.group('name').strip('?.,!` '))))}"
    return ""


def names_code(text: str) -> bool:
    """Whether ``text`` names something from code (snake_case, camelCase, ``name()``): like a file
    name, it makes a short message a request ("who calls getUserById?"), and a thin tool ("Search
    the code base.") may cover it ("where is the function parse_config defined?" was refused by
    ``policy.uncovered``; a helper's variants of case route-14, 2026-12-05)."""
    return _CODE_NAME_RE.search(text) is not None


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
        follow-up ("and tomorrow?", "do that again"), and only a greeting, small talk or a
        request for writing is conversation.

    Notes
    -----
    Whole-message greeting, small talk (:func:`is_small_talk`) or a request the model fulfils by
    writing (:func:`asks_for_writing`) first, then the short-input rule.
    A URL, a file name ("report.txt"), a name from code (:func:`names_code`), a tool keyword, an
    arithmetic expression ("443 * 349") beside a calculator's keyword, or a quantity asked in another
    unit ("12 km in miles?") beside a converter's keyword always makes it a request. Words are counted by :func:`word_count`
    (characters for scripts without spaces), and text in a script the keyword lists cannot read
    (:func:`unread_script`) is conversation only when it is a greeting, as are three words or more
    in a language read neither directly nor through a gloss (:func:`unread_language`); a glossed
    language's words count by their gloss.
    """
    norm = _normalise_for_greeting(text)
    if not norm:
        return True
    if find_urls(text) or _FILE_NAME_RE.search(text):
        return False
    if not isinstance(keywords, (set, frozenset)):  # a catalogue's keywords come as a frozenset: no copy
        keywords = set(keywords)
    if norm in _GREETING_PHRASES or is_small_talk(norm) or asks_for_writing(norm, keywords) or asks_about_language(
            text, keywords):
        return True
    if names_code(text) and len(text.split()) > 1 and not _greeting_only(text):
        return False  # "who calls getUserById?"; a lone name ("fn_responses") and "hi_there" stay chat
    if follow_up:
        return False
    if unread_script(norm):
        return False  # only a greeting (above) is conversation in a script the keywords cannot read
    short = word_count(norm) <= max_words or len(text.strip()) <= max_chars
    if not short:
        return False
    words = _WORD_RE.findall(norm)
    glossed = [g for w in words if FOREIGN_GLOSSES.get(w, w) != w for g in FOREIGN_GLOSSES[w].split()]
    if word_count(norm) >= 3 and not glossed and unread_language(norm) and not any(w in _GREETING_WORDS for w in words):
        # nor in a language they cannot read even through a gloss, but for thanks and greetings with
        # their intensifiers ("tack så mycket", "grazie mille davvero"): "Spela lite jazz" and "Yarın
        # hava nasıl?" were conversation (round fourteen's variants of route-08, 2026-12-07)
        return False
    words += glossed  # a glossed language's words are read by their gloss ("Toca um jazz": play)
    if _ARITHMETIC_RE.search(text) and any(_ARITHMETIC_KEYWORD_RE.match(k) for k in keywords):
        return False
    if _CONVERSION_RE.search(text) and any(_CONVERSION_KEYWORD_RE.match(k) for k in keywords):
        return False
    # a hyphenated keyword is read whole ("list my to-dos": "to-do" was split into "to" and "dos";
    # round eighteen's variants, 2026-12-07)
    words += re.findall(r"\b[^\W\d_]++(?:-[^\W\d_]++)+", text.lower())  # possessive: linear on one long word
    for word in words:
        if word in keywords or (word.endswith("s") and word[:-1] in keywords):
            return False
    # a typo of a keyword is still a request ("chek my emial", "paus the podcats": demo set, tag typo)
    return not any(one_edit_apart(word, k) for word in words if len(word) >= 4
                   for k in keywords if len(k) >= TYPO_MIN_LETTERS and abs(len(k) - len(word)) <= 1)


def only_short(text: str, keywords: Iterable[str] = (), **knobs: Any) -> bool:
    """Whether :func:`is_conversational` (same arguments) calls ``text`` conversation only by the
    short-input rule (three words, no tool keyword), not as a greeting, small talk, a request for
    writing or a question about words, and the message has three words or more and opens with no
    question word (:data:`~eris_lab.lexicon.QUESTION_WORDS`), or asks about the weather by a state
    of it (:func:`read_weather`: "is it nice out?").

    Such a message may still be a command the keyword list does not know ("lint the project",
    "countdown 90 seconds", "NBA standings please": a helper's variants, 2026-12-05): the router
    scores it, and it is conversation unless a tool clears the single-hit floor.
    """
    if not is_conversational(text, keywords, **knobs):
        return False
    norm = _normalise_for_greeting(text)
    words = norm.split()
    # a word or two ("ratings", "guide me") and a short question ("What is 2*3?" beside vehicle
    # tools, BFCL live_irrelevance_271-57-6) stay conversation: measured on live_irrelevance
    # a question about the weather by a state of it ("is it nice out?", "raining?") is scored all the same
    if (len(words) < 3 or words[0] in QUESTION_WORDS) and not _WEATHER_QUESTION_RE.search(text):
        return False
    keywords = keywords if isinstance(keywords, (set, frozenset)) else set(keywords)
    return bool(norm) and not (norm in _GREETING_PHRASES or is_small_talk(norm) or _greeting_only(norm)
                               or asks_for_writing(norm, keywords) or asks_about_language(text, keywords))


#: Keywords this long or longer match a word one edit away (a letter added, dropped, changed, or two
#: neighbours swapped: Damerau 1964, the commonest typing errors). Shorter ones must match exactly:
#: "cool" is one edit from "tool".
TYPO_MIN_LETTERS = 5


def one_edit_apart(word: str, keyword: str) -> bool:
    """True when ``word`` is ``keyword`` with exactly one insertion, deletion, substitution or
    transposition of adjacent letters (restricted Damerau-Levenshtein distance 1)."""
    if word == keyword:
        return False
    if len(word) == len(keyword):
        diff = [i for i, (a, b) in enumerate(zip(word, keyword)) if a != b]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and word[diff[0]] == keyword[diff[1]] and word[diff[1]] == keyword[diff[0]])
    short, long_ = sorted((word, keyword), key=len)
    i = next((j for j, (a, b) in enumerate(zip(short, long_)) if a != b), len(short))
    return short[i:] == long_[i + 1:]


#: Words shorter than this are never corrected ("bsu" -> "bus" is, "fr" is not).
SPELLING_MIN_LETTERS = 3
_LETTERS_RE = re.compile(r"[^\W\d_]+", re.UNICODE)


class SpellingIndex:
    """The catalogue's words (or a vocabulary's), their counts, and a deletion index for one-edit lookups.

    Words: name words, descriptions and routing phrases, lower-cased, letters only, at least
    :data:`SPELLING_MIN_LETTERS` long. Each word is filed under itself and every string one letter
    shorter (the symmetric-delete idea of Garbe's SymSpell, 2012): two words one edit apart share a
    key, so a lookup reads a few keys instead of the whole vocabulary (a 100,000-tool catalogue).
    """

    def __init__(self, catalog: Catalog | None = None, *, words: Iterable[str] = ()) -> None:
        texts = [" ".join((" ".join(name_words(tool.name)), tool.description, *routing_phrases(tool)))
                 for tool in catalog or ()]
        self.counts: dict[str, int] = {}
        for word in itertools.chain((w for text in texts for w in _LETTERS_RE.findall(text.lower())),
                                    (w.lower() for w in words)):  # ``words``: a vocabulary of its own
            if len(word) >= SPELLING_MIN_LETTERS:
                self.counts[word] = self.counts.get(word, 0) + 1
        self._keys: dict[str, list[str]] = {}
        for word in self.counts:
            for key in _deletes(word):
                self._keys.setdefault(key, []).append(word)

    def __contains__(self, word: str) -> bool:
        return word in self.counts

    def one_edit(self, word: str) -> list[str]:
        """Catalogue words exactly one edit from ``word``."""
        found = {v for key in _deletes(word) for v in self._keys.get(key, ())}
        return sorted(v for v in found if one_edit_apart(word, v))


def _deletes(word: str) -> set[str]:
    return {word} | {word[:i] + word[i + 1:] for i in range(len(word))}


def spelling_index(catalog: Catalog) -> SpellingIndex:
    """The catalogue's :class:`SpellingIndex` (built once per catalogue)."""
    return catalog.derived("guard.spelling_index", SpellingIndex)


#: Ordinals a follow-up names a listed item by ("delete the second one").
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def spelling_fixes(text: str, index: SpellingIndex | Callable[[], SpellingIndex],
                   known: Callable[[str], bool] = lambda word: False) -> dict[str, str]:
    """Misspelt words of ``text`` and the catalogue word each stands for.

    A word is fixed when it is neither ``known`` (e.g. the embedding model's whole-word
    vocabulary) nor in the catalogue (``index``, or a function that builds it: called only when
    some word is unknown, so most messages never build it) and is exactly one edit (a letter added,
    dropped, changed, or two neighbours swapped; Damerau 1964) from a catalogue word; among several
    such words those that hold every letter written go first (a letter left out), then the most
    frequent in the catalogue wins, a tie fixes nothing. Words with a capital
    after the sentence start, digits, or inside quotes are left alone (names, ids, literal values).

    Returns
    -------
    dict
        ``{word as written: fix}``, lower-case fixes; empty when nothing needs fixing.

    Notes
    -----
    The demo set's typo messages ("how mcuh battrey is left", "next bsu from the main staton")
    embed far from every tool, so the relevance gate refused them. The router scores the fixed text
    beside the original, so a fix can raise a tool's score but never lower one (a raised wrong tool
    can still narrow the offer: "stok" -> "stock" in an Indonesian live_multiple message).
    """
    quoted = {m.group(0).lower() for q in _QUOTED_RE.finditer(text) for m in _LETTERS_RE.finditer(q.group(0))}
    unknown: list[tuple[str, str]] = []
    previous = ""  # the last non-space character before the current word
    end = 0
    for match in _WORD_RE.finditer(text):
        gap = text[end:match.start()].rstrip()
        previous, end = (gap[-1] if gap else previous), match.end()
        written = match.group(0)
        word = written.lower()
        sentence_start = previous in ("", ".", "!", "?", ":", ";")
        previous = written[-1]
        if (len(word) < SPELLING_MIN_LETTERS or not word.isalpha() or word in quoted or known(word)
                or any(c.isupper() for c in written[1 if sentence_start else 0:])):  # a name, a German noun
            continue
        unknown.append((written, word))
    if not unknown:
        return {}
    index = index if isinstance(index, SpellingIndex) else index()
    fixes: dict[str, str] = {}
    for written, word in unknown:
        if (written in fixes or word in index
                or (len(word) > 4 and word.endswith("s") and (word[:-1] in index or known(word[:-1])))):  # a plural
            continue
        # a mistyped ordinal points at a listed item; fixed to a catalogue word it named a tool
        # ("pls delte the secnd one": "send", the mail tools led; round seventeen's variants)
        if any(one_edit_apart(word, ordinal) for ordinal in _ORDINALS):
            continue
        # the first letter is rarely the one mistyped (Pollock & Zamora 1983: 7% of misspellings),
        # and three letters leave room for a swap only ("bsu"), not for "vom" -> "von"
        # a letter with an accent is typed on purpose, in another language: "días" is no "das"
        # (round twelve's variants, 2026-12-06, night), though "weter" may be "wetter"
        candidates = [c for c in index.one_edit(word) if c[0] == word[0]
                      and (len(word) > SPELLING_MIN_LETTERS or sorted(c) == sorted(word))
                      and (word.isascii() or not c.isascii())]
        if not candidates:
            continue
        # a word that is a catalogue word with one letter left out keeps every letter typed: that
        # reading goes first ("timr" is "timer", not the more frequent "time": round twelve's
        # variants, 2026-12-06, routed "set a timr for 15 minuts" to a reminder)
        candidates = [c for c in candidates if _holds_in_order(c, word)] or candidates
        best = max(index.counts[c] for c in candidates)
        top = [c for c in candidates if index.counts[c] == best]
        if len(top) == 1:
            fixes[written] = top[0]
    return fixes


def _holds_in_order(longer: str, word: str) -> bool:
    """Whether ``longer`` holds every letter of ``word``, in order (``word`` with letters left out)."""
    letters = iter(longer)
    return len(longer) > len(word) and all(c in letters for c in word)


@functools.lru_cache(maxsize=1)
def known_words() -> frozenset[str]:
    """Words never fixed: the bundled embedding model's whole-word vocabulary (22,500 English
    word pieces that are whole words) and the lexicon's English and German function words and
    glosses. Without the bundled model, the lexicon's words alone."""
    from .lexicon import ENGLISH_CUES, GERMAN_CUES, GERMAN_GLOSSES, STOPWORDS

    words = set(STOPWORDS) | set(GERMAN_CUES) | set(ENGLISH_CUES) | set(GERMAN_GLOSSES)
    try:
        from .embed import bundled_model_path

        vocab = bundled_model_path() / "vocab.txt"
        words |= {line.strip() for line in vocab.read_text(encoding="utf-8").splitlines() if line.strip().isalpha()}
    except (ErisLabError, OSError):  # pragma: no cover - the bundled model is a dependency
        pass
    return frozenset(words)


def apply_spelling(text: str, fixes: Mapping[str, str]) -> str:
    """``text`` with each word of ``fixes`` replaced (whole words only)."""
    if not fixes:
        return text
    return _WORD_RE.sub(lambda m: fixes.get(m.group(0), m.group(0)), text)


#: A question whether something exists ("is there a program starting ZOK?", "do we have a
#: customer called Mey?", "gibt es ein Programm namens ZOK?"): a search, whatever the object's
#: noun pulls (reported case route-10: the noun pulled its create/get/delete tools).
_EXISTENCE_RE = re.compile(
    r"(?i)^\W*(?:(?:hey|hi|hello|ok|okay|so|quick question)\W+)*(?:(?:can|could) you (?:check|tell me|see) )?(?:(?:if|whether) )?"
    r"(?:is there|are there|is there any|are there any|have we got|have i got|do (?:we|you|i) (?:already |still |even )?"
    r"(?:have|got)|do you (?:sell|carry|stock|offer)|is there already|are there already"
    # other languages, as case route-10's Ukrainian "є?" (a helper's variants, 2026-12-05)
    r"|gibt es|haben wir|habe ich|hab ich|existiert|c'è|c’è|ci sono|hay|il y a|y a-t-il|existe|existen|is er|zijn er)"
    r"\s+(?P<rest>\S.*)$")


_OPENS_A_LOCAL_FILE_RE = re.compile(
    r"(?i)\b(?:load|open|read|show|view|display|cat|print|parse|import|lade|öffne|oeffne|lies|zeig)\s+"
    r"(?:(?:the|my|this|that|die|den|das|meine)\s+)?(?:(?:local\s+)?(?:file|datei|notiz)\s+)?"
    r"(?P<path>(?:[~.]?/)?[\w\-.]+(?:/[\w\-.]+)+|" + _FILE_NAME_RE.pattern.removeprefix("(?i)") + ")")


def read_local_file(text: str) -> str:
    """"read the local file PATH" for each path a verb loads, opens or reads when ``text`` holds no
    URL ("load Content/Data/enemies.json and list assets" -> "read the local file
    Content/Data/enemies.json"), or ``""``. A download tool scored 0.92 for "load
    Content/Data/enemies.json" and the file reader was left out (a helper's variant of route-26,
    2026-12-05); the router scores this reading beside the message, so it can raise a score, never
    lower one."""
    if find_urls(text):
        return ""
    paths = [m.group("path") for m in _OPENS_A_LOCAL_FILE_RE.finditer(text)]
    return "; ".join(f"read the local file {p}" for p in paths)


def read_existence(text: str) -> str:
    """``text`` read as a search when it asks whether something exists ("is there a program
    starting ZOK?" -> "search for a program starting ZOK?"), or ``""``. The router scores this
    reading beside the message, so it can raise a search tool's score, never lower one."""
    match = _EXISTENCE_RE.match(text)
    if match is None or len(match.group("rest").split()) < 2:
        return ""
    return f"search for {match.group('rest')}"


_ADDRESS_RE = re.compile(r"\b([\w.+-]+)@[\w-]+(?:\.[\w-]+)+")


_REMINDER_IDIOM_RE = re.compile(r"(?i)\b(?:" + "|".join(REMINDER_IDIOMS) + r")")


def read_idioms(text: str) -> str:
    """``text`` with each idiom that asks to be reminded read as "remind me"
    (:data:`~eris_lab.lexicon.REMINDER_IDIOMS`: "don't let me forget to pay the rent" -> "remind me
    to pay the rent"), or ``""`` when it holds none. The router scores this reading beside the
    message, so it can raise a tool's score, never lower one."""
    read, count = _REMINDER_IDIOM_RE.subn("remind me", text)
    return " ".join(read.split()) if count else ""


_FIGURATIVE_RES = tuple((re.compile(r"(?i)\b" + pattern + r"\b"), plain) for pattern, plain in FIGURATIVE_IDIOMS.items())


def literal_idioms(text: str) -> str:
    """``text`` with each figure of speech read plainly (:data:`~eris_lab.lexicon.FIGURATIVE_IDIOMS`:
    "I'm feeling a bit under the weather today" -> "I'm feeling a bit unwell today"), or ``""``
    when it holds none. The router scores this instead of the message, as it does the message
    without small talk: the idiom's tool word is no request."""
    read = text
    for pattern, plain in _FIGURATIVE_RES:
        read = pattern.sub(plain, read)
    return " ".join(read.split()) if read != text else ""


_WEATHER_QUESTION_RE = re.compile(r"(?i)" + "|".join(WEATHER_QUESTIONS))
_SAYS_WEATHER_RE = re.compile(r"(?i)\b(?:weather|forecast)")


def read_weather(text: str) -> str:
    """``text`` with "(weather forecast)" after it when it asks about the weather by a state of it
    (:data:`~eris_lab.lexicon.WEATHER_QUESTIONS`: "how hot will it get on Saturday?", "do I need an
    umbrella tomorrow?") and does not say "weather" or "forecast", else ``""``. The router scores
    this reading beside the message, so it can raise a tool's score, never lower one."""
    if not _WEATHER_QUESTION_RE.search(text) or _SAYS_WEATHER_RE.search(text):
        return ""
    return f"{text} (weather forecast)"


_BILLING_RE = re.compile(r"(?i)" + "|".join(BILLING_COMPLAINTS))
_SAYS_BILLING_RE = re.compile(r"(?i)\b(?:refund|invoice|billing|bill)\b")


_PROBLEM_REPORT_RE = re.compile(PROBLEM_REPORT_RE)


def reports_problem(text: str) -> bool:
    """Whether ``text`` reports a problem (:data:`~eris_lab.lexicon.PROBLEM_REPORT_RE`: "my laptop
    won't turn on", "the app keeps crashing whenever I log in", "I never got my package")."""
    return _PROBLEM_REPORT_RE.search(text) is not None


def support_tools(catalog: Catalog) -> frozenset[str]:
    """Tools whose text names support: cases, tickets, a helpdesk, bugs
    (:data:`~eris_lab.lexicon.SUPPORT_TOOL_RE`, read in ``catalog.lexical_text``)."""
    return catalog.derived("guard.support_tools", _support_tools)


def _support_tools(catalog: Catalog) -> frozenset[str]:
    pattern = re.compile(SUPPORT_TOOL_RE)
    return frozenset(t.name for t in catalog if pattern.search(lexical_text(t)))


def read_problem(text: str) -> str:
    """``text`` with "(a problem to report: open a support ticket)" after it when it reports a
    problem (:func:`reports_problem`), else ``""``; scored beside the message like
    :func:`read_weather`. "my laptop won't turn on" shares no word with "Create an IT helpdesk
    ticket." (raw cosine 0.20; a helper's variants of route-18, 2026-12-06). The router reads it only
    beside a support tool (:func:`support_tools`): elsewhere the reading would only let the
    relevance gate pass a message it refuses ("Missing name for redirect.", live_irrelevance)."""
    return f"{text} (a problem to report: open a support ticket)" if reports_problem(text) else ""


def read_billing(text: str) -> str:
    """``text`` with "(refund, billing problem)" after it when it complains of a charge in other
    words (:data:`~eris_lab.lexicon.BILLING_COMPLAINTS`: "you took my money twice, I want it
    back"), else ``""``; scored beside the message like :func:`read_weather`."""
    if not _BILLING_RE.search(text) or _SAYS_BILLING_RE.search(text):
        return ""
    return f"{text} (refund, billing problem)"


def read_addresses(text: str) -> str:
    """``text`` with each email address read as its local part and the words "an email address"
    ("email alice@example.org that ..." -> "email alice (an email address) that ..."), or ``""``
    when it holds none.

    The embedder reads an address as word pieces of a domain name, which pulled "email
    alice@example.org that the meeting moved" to the calendar and left ``mail:write`` out (bad
    input row 29); the router scores this reading beside the message, so it can raise a tool's
    score, never lower one."""
    if "@" not in text:
        return ""
    read, count = _ADDRESS_RE.subn(lambda m: f"{m.group(1).replace('.', ' ')} (an email address)", text)
    return read if count else ""


_POINTER_RE = re.compile(r"(?i)\s*\b(?:for|about|with|of|on|to|in|from)\s+(?:that|this|it|them|those|these)\b")


def without_pointers(text: str) -> str:
    """``text`` without the phrases that only point back ("for that", "about this", "with it"), or
    ``""`` when it holds none or little would be left.

    Such a phrase carries no subject, yet it moves a short message's vector: "is there a video for
    that?" scored ``find_video`` at cosine 0.22, "... for this?" at 0.30 and "is there a video?"
    at 0.30 (a helper's variant of case route-05). The router scores this reading beside the
    message, so it can raise a tool's score, never lower one."""
    read, count = _POINTER_RE.subn("", text)
    read = " ".join(read.split())
    return read if count and len(read.split()) >= 2 and read != text else ""


_QUOTED_RE = re.compile(r"'[^']+'|\"[^\"]+\"|“[^”]+”|„[^“]+“")
#: A quoted span that opens after a space, a bracket, a colon or the start and closes before one
#: (an apostrophe inside a word, "Kelly's", "don't", opens and closes nothing): straight single and
#: double quotes, curly ones, German and French ones.
_QUOTE_SPAN_RE = re.compile(
    r"(?<![\w'’])(?:'[^'\n]+'|\"[^\"\n]+\"|‘[^’\n]+’|“[^”\n]+”|„[^“”\n]+[“”]|«[^»\n]+»)(?![\w])")
#: A quoted span of this many words or more is text the user hands over (a message's body, a note's
#: content, a title), not the request: "send a message to her saying '100 shares of GOOG purchased,
#: thoughts?'" (multi_turn_base_141 turn 4, whose offer held 14 trading tools and no send_message).
PAYLOAD_MIN_WORDS = 3


def without_payload(text: str, *, min_words: int = 2) -> str:
    """``text`` with its quoted payloads (quoted spans of :data:`PAYLOAD_MIN_WORDS` words or more)
    left out, or ``""`` when it holds none or fewer than ``min_words`` words would be left.

    What a message, note or file should *say* is no request, yet its words move the vector: on
    BFCL's multi-turn conversations "Please send a message to her saying '100 shares of GOOG
    purchased, thoughts?'" ranked every trading tool above ``send_message``. A short quote ('AAPL',
    'report.txt', "Bohemian Rhapsody") names an object and stays. The router scores this reading
    beside the message, so it can raise a tool's score, never lower one.
    """
    text, spans = _payload_spans(text)
    if not spans:
        return ""
    pieces, start = [], 0
    for m in spans:
        pieces.append(text[start:m.start()])
        start = m.end()
    read = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(("".join(pieces) + text[start:]).split()))
    return read if read != " ".join(text.split()) and len(read.split()) >= min_words else ""


def quoted_payloads(text: str) -> list[str]:
    """The quoted payloads of ``text`` (what :func:`without_payload` leaves out), without their
    quote marks, in order; ``[]`` when it holds none.

    >>> quoted_payloads('email Bob: "set an alarm for 7" and thank \'Kelly\'')
    ['set an alarm for 7']
    """
    return [m.group(0)[1:-1].strip() for m in _payload_spans(text)[1]]


def _payload_spans(text: str) -> tuple[str, list[re.Match[str]]]:
    """``text`` read inside its wrapping quotes (:func:`_unwrapped`) and its quoted payloads
    (:func:`_is_payload`) in order: what :func:`without_payload` leaves out and
    :func:`quoted_payloads` returns."""
    if not any(q in text for q in "'\"‘“„«"):
        return text, []
    text = _unwrapped(text)
    return text, [m for m in _QUOTE_SPAN_RE.finditer(text) if _is_payload(m, text)]


#: Words a name may hold in lower case ('King of Hearts', 'Pirates of the Caribbean').
_NAME_JOINERS = frozenset("of the and a an in on at for to de la le du van von der und".split())


def _is_payload(match: re.Match[str], text: str) -> bool:
    """Whether a quoted span is text handed over: :data:`PAYLOAD_MIN_WORDS` words or more, not the
    whole message, and not a name (every word capitalised but joiners such as 'of': 'King of
    Hearts', 'New York, NY', 'Empire State Building' name an object; a helper's unwrapping of
    BFCL's quoted parallel_multiple cases, 2026-12-05, read them as payloads)."""
    span = match.group(0)
    if len(span.split()) < PAYLOAD_MIN_WORDS or _whole(match, text):
        return False
    words = [w for w in re.findall(r"[^\W\d_]+", span) if w.lower() not in _NAME_JOINERS]
    return not words or not all(w[0].isupper() for w in words)


#: Opening quote marks and the marks that close them, for :func:`_unwrapped`.
_CLOSING_MARKS = {'"': '"', "'": "'", "“": "”", "‘": "’", "„": "“”", "«": "»"}


def _unwrapped(text: str) -> str:
    """``text`` without the quote marks it is wrapped in, if it is (BFCL's parallel_multiple cases
    are): the quotes inside it are then read as quotes ('"send Bob a message saying 'hi there my
    friend'"'), not swallowed by the wrapper."""
    stripped = text.strip()
    closing = _CLOSING_MARKS.get(stripped[:1], "")
    if len(stripped) > 2 and closing and stripped[-1] in closing:
        return stripped[1:-1].strip()
    return text


def _protect_quotes(text: str) -> tuple[str, list[str]]:
    """``text`` with each quoted span replaced by a placeholder that no split pattern matches, and
    the spans, for :func:`_restore_quotes`: a quoted message body is one piece, never split at its
    own "and", comma or full stop into requests of its own."""
    spans: list[str] = []

    def hold(match: re.Match[str]) -> str:
        if _whole(match, text):
            return match.group(0)
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    return _QUOTE_SPAN_RE.sub(hold, text), spans


def _whole(match: re.Match[str], text: str) -> bool:
    """Whether a quoted span is the whole message, or opens a message that its closing mark also
    ends (BFCL's parallel_multiple cases come wrapped in double quotes): that is the request itself,
    not a quote inside it. The second: an inch mark inside the wrapper closes the span early
    ('"... I am a 180 lbs, 5'11" tall individual ... on Monday?"', parallel_multiple_180)."""
    if text[:match.start()].strip():
        return False
    return not text[match.end():].strip(" \t\n.!?") or text.rstrip().endswith(match.group(0)[-1])


def _restore_quotes(text: str, spans: Sequence[str]) -> str:
    return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], text) if spans else text



def fetch_tool(catalog: Catalog) -> str:
    """The catalogue's page-fetch tool: ``web:fetch`` if present, else a tool whose name fetches,
    scrapes or crawls, or reads, gets or opens a page or URL (``scrape``, ``read_webpage``,
    ``get_url``), one naming the web, a URL or a page first; else a tool whose description fetches
    what a link points at ("Download and read a document or web page from a link.").

    Returns ``""`` when the catalogue has none (then URLs force nothing).
    """
    if "web:fetch" in catalog:
        return "web:fetch"
    words = {t.name: set(name_words(t.name)) for t in catalog}
    candidates = [n for n, w in words.items() if _FETCH_VERBS & w or (_READ_PAGE_VERBS & w and _PAGE_WORDS & w)]
    preferred = [n for n in candidates if _PAGE_WORDS & words[n]]
    if not candidates:  # read_document: "Download and read a document or web page from a link." (a
        # helper's variant of case route-12: the URL's fee schedule was never fetched)
        candidates = [t.name for t in catalog if _FETCHES_A_LINK_RE.search(t.description)]
    return (preferred or candidates or [""])[0]


_FETCH_VERBS = frozenset({"fetch", "scrape", "scraper", "crawl", "crawler", "browse"})
_READ_PAGE_VERBS = frozenset({"read", "get", "open", "load", "visit"})
_PAGE_WORDS = frozenset({"web", "webpage", "website", "url", "page", "http", "html", "site", "link"})
#: A description that fetches what a link points at: a fetch verb, then within the sentence a URL,
#: a link or a web page.
_FETCHES_A_LINK_RE = re.compile(r"(?i)\b(?:fetch|download|read|open|load|retriev|scrap)\w*\b[^.]{0,60}?"
                                r"\b(?:urls?|links?|web ?pages?|websites?|https?)\b")


def names_domain(text: str, domain: str) -> bool:
    """True when ``text`` names ``domain`` as a word (case-insensitive)."""
    return bool(domain) and re.search(rf"(?i)\b{re.escape(domain)}\b", text) is not None


def word_count(text: str) -> int:
    """Words in ``text``: spaced words, plus runs of a script without spaces counted by characters.

    A run of Han or kana counts one word per 2 characters, Thai/Lao/Khmer/Myanmar one per 4
    (rounded up): "明天北京的天气怎么样" is 5 words, not one.
    """
    count = 0
    for run in _SPACELESS_RE.findall(text):
        count += -(-len(run) // _CHARS_PER_WORD[not ("\u0e00" <= run[0] <= "\u17ff")])
    return count + len(_WORD_RE.findall(_SPACELESS_RE.sub(" ", text)))


def singular(word: str) -> str:
    """The word case-folded, without a possessive or a plural ``s``: ``"shareholder's"`` ->
    ``"shareholder"``, ``"equations"`` -> ``"equation"`` (``"glass"`` and ``"bus"`` stay)."""
    word = re.sub(r"['’]s$", "", word.casefold())
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _is_latin_letter(char: str) -> bool:
    # Basic Latin to Latin Extended-B, IPA, and Latin Extended Additional (Vietnamese)
    return char < "\u0250" or "\u1e00" <= char <= "\u1eff"


def unread_script(text: str) -> bool:
    """True when most letters of ``text`` are outside the Latin alphabet (CJK, Hangul, Cyrillic, Thai...).

    The lab's keyword lists are English and German and the bundled MiniLM is English-only, so
    such text cannot be told apart from chit-chat by its words; the guard then treats it as a
    request unless it is a greeting. Digits and punctuation do not count; no letters -> False.
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    return sum(not _is_latin_letter(c) for c in letters) * 2 > len(letters)


def foreign_language(text: str) -> bool:
    """True for Latin-script text in a language other than English and German ("Lis le fichier
    /etc/hosts s'il te plaît", "pon una alarma a las siete", "a klient z nazwiskiem na Mey jest?").

    The bundled MiniLM reads English: on such text its cosines, and the relevance gate that reads
    them, say nothing about fit, so the router does not let them refuse (variants of reported
    cases route-08 and route-10). Read as: at least three words of two or more letters, none of
    them an English function word (:data:`~eris_lab.lexicon.ENGLISH_CUES`), fewer than three in
    four in the embedder's English vocabulary (:func:`known_words`), and not :func:`mostly_german`.
    Measured on 20 requests: French, Spanish, Polish and Portuguese ones are caught; Italian and
    Dutch ones whose words MiniLM's vocabulary holds ("Che tempo fa domani a Roma?") are not,
    and no English one is, keyword-style ("check weather Berlin") and misspelt ones included.
    """
    words = _language_words(text)
    if len(words) == 2:
        # two words ("Llama mamá", "Bel mama"): foreign when each is a foreign word with an English
        # gloss of its own (an identity gloss, "timer", proves nothing; a helper's variants of
        # route-08, 2026-12-06: "Llama a mamá" was conversation)
        return (not any(w in ENGLISH_CUES for w in words) and all(FOREIGN_GLOSSES.get(w, w) != w for w in words)
                and not mostly_german(text))
    return _neither_english_nor_german(words, text) and (_foreign_cue_count(words) >= 2 or _mostly_unknown(words))


def _language_words(text: str) -> list[str]:
    """The words (lower-case, two letters or more, letters only) a language is read by."""
    return [w.lower() for w in _WORD_RE.findall(text) if len(w) >= 2 and w.isalpha()]


def _foreign_cue_count(words: Sequence[str]) -> int:
    """How many distinct function words of another language (:data:`~eris_lab.lexicon.FOREIGN_CUES`)
    ``words`` hold."""
    return len({w for w in words if w in FOREIGN_CUES})


def _reads_english(words: Sequence[str]) -> bool:
    """Whether the English function words among ``words`` prove English: two, or one that no
    neighbouring language shares ("me", "on", "as", "or" are Spanish, French or Portuguese too;
    :data:`~eris_lab.lexicon.ENGLISH_CUES_DUTCH`, Dutch "is", beside two function words of another
    language)."""
    cues = [w for w in words if w in ENGLISH_CUES]
    if _foreign_cue_count(words) >= 2:
        cues = [w for w in cues if w not in ENGLISH_CUES_DUTCH]
    return len(cues) >= 2 or any(w not in ENGLISH_CUES_SHARED for w in cues)


def _neither_english_nor_german(words: Sequence[str], text: str) -> bool:
    """What :func:`foreign_language` and :func:`foreign_by_function_words` ask first of ``text``
    (its :func:`_language_words` ``words``): three words or more, no English proof, Latin script,
    not :func:`mostly_german`."""
    return len(words) >= 3 and not _reads_english(words) and not unread_script(text) and not mostly_german(text)


def foreign_by_function_words(text: str) -> bool:
    """True when :func:`foreign_language` reads ``text`` by its function words: three words or more,
    no English proof, not German, two or more distinct function words of another language
    (:data:`~eris_lab.lexicon.FOREIGN_CUES`: "wat voor weer wordt het morgen in Utrecht").

    Unlike a message :func:`foreign_language` reads only because most words are unknown ("chek
    wether tomorow" is English with typos), its unknown words are that language's, not typos: the
    router fixes no spelling in it ("weer", Dutch weather, was fixed to "week" and the calendar led;
    round twelve's variants, 2026-12-06)."""
    words = _language_words(text)
    return _neither_english_nor_german(words, text) and _foreign_cue_count(words) >= 2


def foreign_by_letters(text: str) -> bool:
    """True when ``text`` reads neither English nor German (:func:`_neither_english_nor_german`) and
    two or more of its words hold a letter neither language writes ("ı", "ş", "å", "ł", "ñ", "é"):
    like :func:`foreign_by_function_words`, evidence that its unknown words are another language's,
    not typos, so the router fixes no spelling in it (Turkish "Hava yarın nasıl olacak?" had "hava"
    fixed to "have", and the memory tools led; round fourteen's variants, 2026-12-07). A typo adds
    no accent, and one loanword ("café") is not two."""
    words = _language_words(text)
    return _neither_english_nor_german(words, text) and sum(
        any(c.isalpha() and not c.isascii() and c not in "äöüß" for c in w) for w in set(words)) >= 2


def words_unread(text: str) -> bool:
    """True when ``text`` has three words or more and at most one in three of them is in the
    embedder's English vocabulary (:func:`known_words`): its cosines say nothing, as another
    script's do ("Yarın hava nasıl?", "Soita vähän jazzia"). Stricter than :func:`unread_language`,
    which also takes "turn off airpurifier" (two of three known) for another language. Text with
    English proof or read as German (:func:`_neither_english_nor_german`) never counts: "chek my
    emial" is English with typos, "Wie kenne ich Familie Schröder?" is glossed."""
    words = _language_words(text)
    known = known_words()
    return _neither_english_nor_german(words, text) and sum(w in known for w in words) * 3 <= len(words)


def _mostly_unknown(words: Sequence[str]) -> bool:
    """Fewer than three in four of ``words`` (lower-case) are in the embedder's English vocabulary
    (:func:`known_words`)."""
    known = known_words()
    return sum(w in known for w in words) * 4 < len(words) * 3


def unread_language(text: str) -> bool:
    """True for text the lab reads in neither English nor German: another script
    (:func:`unread_script`), a Latin-script language (:func:`foreign_language`), or three or more
    words with no English or German function word of which fewer than three in four are in the
    embedder's English vocabulary (:func:`known_words`). The last catches the languages whose
    letters :func:`mostly_german` takes for German ("poista tämä muistutus", Finnish; "töröld a
    második emlékeztetőt", Hungarian). Two words say too little: "delete second" has one word the
    vocabulary lacks.
    """
    if unread_script(text) or foreign_language(text):
        return True
    words = _language_words(text)
    if len(words) < 3 or any(w in ENGLISH_CUES or w in GERMAN_CUES for w in words):
        return False
    return _mostly_unknown(words)


def mostly_german(text: str) -> bool:
    """German function words (:data:`~eris_lab.lexicon.GERMAN_CUES`) outnumber English ones
    (:data:`~eris_lab.lexicon.ENGLISH_CUES`), or the text has a German letter: the reading the
    router's German gloss and the slot check's name test share ("Des Moines" and "von der Leyen"
    sit in English sentences). A word that is a function word of another language too (French
    "du") counts for neither, and more such words than German ones make the text not German: "Crée
    un événement demain à 14h avec Julie pour parler du budget" read German, so it was never glossed
    and the relevance gate refused it (a helper's variant f10-r11 of route-08, 2026-12-06)."""
    words = [w.lower() for w in _WORD_RE.findall(text)]
    german = sum(w in GERMAN_CUES and w not in FOREIGN_CUES for w in words)
    if sum(w in FOREIGN_CUES for w in words) > german:
        return False
    return german > sum(w in ENGLISH_CUES for w in words) or any(c in "äöüß" for c in text.lower())


def lexical_terms(text: str, stopwords: Iterable[str] = ()) -> list[str]:
    """Index terms of ``text`` for lexical matching, in any script.

    Lower-cased words of two or more characters (bm25s's default ``\\w\\w+`` pattern), minus
    ``stopwords``; a run of a script without spaces (and Hangul) gives its character bigrams
    instead (a single character stands alone), so a key noun written verbatim in a tool's
    description ("天气" in "查询城市天气") is a shared term. Character bigrams are the standard
    dictionary-free indexing for Chinese and Japanese retrieval (e.g. Lucene's CJKAnalyzer).
    """
    stop = set(stopwords)
    lowered = text.lower()
    terms: list[str] = []
    for run in _NGRAM_RE.findall(lowered):
        terms.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
    terms.extend(w for w in _WORD_RE.findall(_NGRAM_RE.sub(" ", lowered)) if len(w) >= 2 and w not in stop)
    return terms


#: Joints between requests in one message; each side must hold a verb phrase of 2+ words (a word
#: may hold an apostrophe: ", what's the weather" starts a request, bad input row 30).
_CLAUSE_SPLIT_RE = re.compile(r"\s*;\s*|\s*,?\s+(?:and\s+then|and\s+also|then|and|also|plus|und\s+dann|und|dann)\s+"
                              r"|\s*,\s+(?=\w+(?:['’]\w+)?\s+\w+)", re.IGNORECASE)


#: A URL and then the local file it should land in ("pull down https://x.org/rock.png into
#: Content/Textures/rock.png", "download https://x.org/a.json to data/a.json"): two requests, a
#: download and a write, though no "and" joins them (a helper's variant of reported case route-26).
_DOWNLOAD_TO_FILE_RE = re.compile(
    r"(?i)(https?://\S+?)[,.]?\s+(?:into|to|as|under|onto|in|nach|als|unter)\s+(?:(?:the|a|my|die|der|das)\s+)?"
    r"(?:(?:local\s+)?(?:file|path|folder|directory|datei|ordner)\s+)?"
    r"((?:\.{1,2}/|~/|/)?[\w.\-]+(?:[/\\][\w.\-]+)+|[\w\-]+\.[A-Za-z]\w{0,4})(?=[\s,;!?]|\.?$)")


#: A store verb, a URL and the place it should be kept that is no file ("save
#: www.example.org/guide.pdf into my documents"): the download and the keeping are two requests,
#: as with a file (:data:`_DOWNLOAD_TO_FILE_RE`); read whole, the fetch was forced and the document
#: store, a lone weak hit beside it, was demoted (round fourteen's variants of route-26, 2026-12-07).
_STORE_URL_IN_RE = re.compile(
    r"(?i)\b(save|store|keep|put|add|import|ingest|upload|stash|archive|file|speichere|füge)\s+"
    r"((?:https?://|www\.)\S+?)[,.]?\s+(into|to|in|onto|under|zu)\s+"
    r"((?:my|the|our|meine[mnr]?|die|den)\s+(?![\w.\-]*[/\\])[\w-]+(?:\s+(?![\w.\-]*[/\\])[\w-]+)?)")


#: "save it to assets/logo.svg": said as a file ("to a file"), the clause names the write tool ("pull
#: down URL and save it to assets/logo.svg" offered the download alone; a helper's variant of case
#: route-26, 2026-12-05). Any verb that puts data into a file: "append the result to
#: data/users.json" offered the download alone (a helper's variant f10-r44, 2026-12-06).
_SAVE_TO_PATH_RE = re.compile(
    r"(?i)\b((?:save|store|write|put|dump|append|add|export|output|log|persist|stash|record|speichere)"
    r"\s+(?:it|this|that|them|everything|the\s+\w+(?:\s+\w+)?|es|das)?)\s*"
    r"(?:to|as|into|in|under|unter|als|nach)\s+(?!the\s+file\b)"
    r"((?:\.{1,2}/|~/|/)?[\w.\-]+(?:[/\\][\w.\-]+)+|[\w\-]+\.[A-Za-z]\w{0,4})(?=[\s,;!?]|\.?$)")


#: A question about what came before ("..., what's it doing tomorrow?", "wie wird es morgen?"): read
#: alone it is about nothing ("what's it doing" scores news), so its part carries the part before it
#: too (reported case route-01).
_QUESTION_BACK_RE = re.compile(
    r"(?i)^(?:what|how|when|where|which|who|why|wie|was|wann|wo|welche\w*)\b(?:['’]s)?"
    r".*\b(?:it|that|this|them|those|these|es|das|dies\w*)\b")


#: States of the day and the weather that "it" is in without standing for an item.
_IMPERSONAL_STATES = (r"rain\w*|snow\w*|sunny|cold|chilly|hot|warm|windy|cloudy|foggy|misty|humid|icy|freezing|"
                      r"stormy|wet|dry|nice|dark|light|late|early|night|day|noon|midnight|morning|evening")
#: "It" that stands for no item: the time, the date and the weather ("what time is it?", "what day
#: is it?", "is it foggy out?", "how windy is it?"; round thirteen's guards, 2026-12-06). Such a
#: question points back at nothing (``policy._asks_about_item``, :func:`clauses`).
IMPERSONAL_IT_RE = re.compile(r"(?i)\bwhat\s+(?:time|day|date|month|year)\s+is\s+it\b|"
                              r"\bhow\s+(?:" + _IMPERSONAL_STATES + r")\s+is\s+it\b|"
                              r"\b(?:is|was|will)\s+it\s+(?:be\s+|going\s+to\s+(?:be\s+)?|getting\s+|already\s+|still\s+)?"
                              r"(?:very\s+|too\s+|so\s+)?(?:" + _IMPERSONAL_STATES + r")\b")


# where small talk in front of a request ends: a sentence mark or a comma, then a space
_LEADING_BREAK_RE = re.compile(r"(?<=[.!?,;:])\s+")


#: "would you mind (awfully) removing ...", "do you mind crossing ...": the request's verb as a
#: gerund, which no verb cue reads ("remove", "cross ... off").
_MIND_GERUND_RE = re.compile(r"(?i)\b(?:would|do|will)\s+you\s+(?:please\s+)?mind\s+"
                             r"(?:(?:awfully|terribly|very\s+much|at\s+all|much|too\s+much|just)\s+)*([a-z]{3,})ing\b")


#: A long polite wrapper around a bare verb: "I'd really appreciate it if you could remove the
#: second one", "would you be so kind as to remove the second one" (round seventeen's variants,
#: 2026-12-07: right after ``agenda:list`` the listing led, or the gate refused it).
_POLITE_WRAPPER_RE = re.compile(
    r"(?i)^\W*(?:(?:ok|okay|so|and|oh|hey|hi)\W+)*(?:i['’]?d\s+(?:really\s+|very\s+much\s+|much\s+|so\s+)?"
    r"(?:appreciate|love)\s+it\s+if\s+you\s+(?:could|would|can)|would\s+you\s+be\s+(?:so\s+kind|kind\s+enough|"
    r"good\s+enough)\s+(?:as\s+)?to|if\s+you\s+(?:could|would|can)|could\s+you\s+possibly|would\s+it\s+be\s+"
    r"possible\s+to|is\s+it\s+possible\s+to)\s+(?:(?:please|just|kindly)\s+)*(?=[a-z])")


def plain_gerund(text: str) -> str:
    """``text`` with a request put as "would you mind X-ing" written as the bare verb, or ``""``
    when it has none: "would you mind awfully removing the second one?" -> "remove the second
    one?" (round fifteen's variants, 2026-12-07: right after ``agenda:list`` the pairing read no
    verb and put the listing first). A long polite wrapper is dropped the same way
    (:data:`_POLITE_WRAPPER_RE`: "would you be so kind as to remove the second one"). The verb's
    base form is the first of the stem ("cross"), the stem with an e ("remove") and the stem
    undoubled ("drop") that the bundled MiniLM knows."""
    found = _MIND_GERUND_RE.search(text)
    if not found:
        wrapped = _POLITE_WRAPPER_RE.match(text)
        return text[wrapped.end():] if wrapped else ""
    stem = found.group(1).lower()
    known = known_words()
    candidates = [stem, stem + "e"] + ([stem[:-1]] if len(stem) > 3 and stem[-1] == stem[-2] else [])
    base = next((c for c in candidates if c in known), stem)
    return text[:found.start()] + base + text[found.end():]


#: A condition in front of a request ("if the dentist is still on Friday, move it to Monday", "wenn
#: es regnet, ..."): up to its comma.
_LEADING_CONDITION_RE = re.compile(r"(?i)^\W*(?:(?:ok|okay|so|and|oh)\W+)*(?:if|when|once|as\s+soon\s+as|in\s+case|"
                                   r"wenn|falls|sobald)\b[^,;:.!?]{1,80}[,;:]\s+(?=\S+\s+\S)")


def without_condition(text: str) -> str:
    """The request after a condition in front of it, or ``""`` when there is none: "if the dentist
    is still on Friday, move it to Monday" -> "move it to Monday". Right after ``calendar:list`` the
    condition's words had put the message past the pairing's word limit (round fifteen's variants,
    2026-12-07); the request's "it" is the thing just listed either way."""
    found = _LEADING_CONDITION_RE.match(text)
    return text[found.end():] if found else ""


def without_small_talk(text: str) -> str:
    """The request after small talk in front of it, or ``""`` when there is none: "hey, how are
    you? fix the login bug please" -> "fix the login bug please" (a variant of case route-14,
    where "how are you" pulled run_tests). A bare greeting in front ("hi, fix the bug") is left
    to the router (its message row reads both); the front must be :func:`is_small_talk`.
    """
    pieces = _LEADING_BREAK_RE.split(text.strip())
    for cut in range(len(pieces) - 1, 0, -1):
        front, rest = " ".join(pieces[:cut]), " ".join(pieces[cut:])
        if is_small_talk(front) and not is_small_talk(rest) and not _greeting_only(rest):
            return rest
    return ""


#: Where a message's statements and requests part: a sentence mark, a comma, a semicolon or a
#: colon before a space, or a dash between spaces.
_PIECE_BREAK_RE = re.compile(_LEADING_BREAK_RE.pattern + r"|\s+[-–—]+\s+")
#: Words a statement opens with (a pronoun, a determiner, an interjection), not a command's verb.
_STATEMENT_OPENERS = frozenset(
    """i i'm im i've i'd my me we we're we've our you you're you've your this that these those it it's
    its they they're they've their he he's she she's the a an what how so honestly seriously
    absolutely totally wow oh man god ugh argh there
    there's everything nothing ich mein meine das die der es wir je j'suis c'est estoy""".split())
_VENTING_PHRASE_RE = re.compile(r"(?i)\b(?:" + "|".join(re.escape(p) for p in VENTING_PHRASES) + r")\b")


def venting_word(word: str) -> bool:
    """Whether a lower-case ``word`` vents a feeling: one of :data:`~eris_lab.lexicon.VENTING_WORDS`
    or an inflection of one by its English Snowball stem ("wrecked", "wrecking" by "wreck";
    "politicians have wrecked everything" kept the politics tool before "wrecked" was read: a
    helper's variants of route-01, 2026-12-05)."""
    return word in VENTING_WORDS or (len(word) > 3 and _english_stemmer().stemWord(word) in _venting_stems())


@functools.cache
def _english_stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@functools.cache
def _venting_stems() -> frozenset[str]:
    # "blind" is left out: "the blinds are stuck" is a smart-home request, not venting
    return frozenset(_english_stemmer().stemWord(w) for w in VENTING_WORDS if w.isascii() and w != "blind")


def _vents(piece: str) -> bool:
    """Whether ``piece`` is a statement that vents a feeling or an opinion: no question mark, opens
    with a pronoun, a determiner, an interjection or a noun, not with a command's verb or a
    question word (:data:`_REQUEST_OPENERS`: "delete those stupid spam mails" is a request), and
    holds a :data:`~eris_lab.lexicon.VENTING_WORDS` word or phrase ("politicians are all liars
    anyway", "wall street greed makes me sick": a helper's variants of route-01, 2026-12-05)."""
    words = [w.lower() for w in re.findall(r"[\w']+", piece)]
    if not words or "?" in piece or (words[0] not in _STATEMENT_OPENERS and words[0] in _REQUEST_OPENERS):
        return False
    return any(venting_word(w) for w in words) or bool(_VENTING_PHRASE_RE.search(piece))


def only_vents(text: str) -> bool:
    """Whether every piece of ``text`` vents a feeling or an opinion (:func:`_vents`) and it asks for
    nothing (:func:`asks_something`): "my week has been a total disaster and I'm exhausted" got
    eight tools, a politics tool first (round fourteen's variants of route-01, 2026-12-07). The
    policy offers nothing for it unless a tool is confident or it reports a problem to a support
    tool."""
    pieces = [p for p in _PIECE_BREAK_RE.split(text.strip()) if p.strip()]
    # each a statement: "remeber that i hate olives" (demo typo-020) opens with a request's verb
    opens = [next(iter(re.findall(r"[\w']+", p.lower())), "") for p in pieces]
    return (bool(pieces) and all(_vents(p) for p in pieces) and all(w in _STATEMENT_OPENERS for w in opens)
            and not asks_something(text))


_DONE_REPORT_RE = re.compile(DONE_REPORT_RE)
#: A tool that keeps a record of what happened ("log_meal: Record what the user ate in their food
#: diary", "log_workout"): for it a report of something done is the data (variant-route-23-80, "I had
#: a banana"). Read in the name's first word and the description's opening or its "diary" / "journal".
_LOGGING_NAME_WORDS = frozenset({"log", "track", "journal", "diary"})
_LOGGING_TEXT_RE = re.compile(r"(?i)^\W*(?:log|logs|track|tracks|journal)\b|\b(?:diary|journal|logbook)\b")


def reports_done(piece: str) -> bool:
    """Whether ``piece`` is a statement that reports something done and over
    (:data:`~eris_lab.lexicon.DONE_REPORT_RE`: "I paid the electricity bill on Monday", "the timer
    already went off", "Ich habe den Wecker schon gestellt"), not a problem (:func:`reports_problem`)."""
    return ("?" not in piece and bool(_DONE_REPORT_RE.search(piece.strip())) and not reports_problem(piece)
            and not asks_something(piece))


def only_reports_done(text: str) -> bool:
    """Whether ``text`` only reports things done (:func:`reports_done`), perhaps with small talk
    ("I already set an alarm for six, no worries"), and asks for nothing (:func:`asks_something`).

    Such a message was offered the tool that would do it again: ``clock:alarm`` locked for the
    example, ``pay_bill`` first for "I paid the electricity bill on Monday" (round fifteen's
    variants, 2026-12-07). The policy offers nothing for it unless a tool keeps a log of such
    things (:func:`logging_tools`)."""
    pieces = [p for p in _PIECE_BREAK_RE.split(text.strip()) if p.strip()]
    done = [reports_done(p) for p in pieces]
    # beside it only small talk or thanks: "I've taken care of the passport renewal, tick it off" asks
    # (demo set), though "tick it off" is short; after it, a remark on how things stand ("already
    # preheated the oven, it's at 200 now", "I picked my seat already, 12C": round eighteen)
    first = done.index(True) if any(done) else len(pieces)
    return (any(done) and all(d or is_small_talk(p) or _greeting_only(p) or (i > first and _AFTERWORD_RE.match(p))
                              for i, (p, d) in enumerate(zip(pieces, done)))
            and not asks_something(text) and not reports_problem(text))


#: A remark after a report on how things stand: "it's at 200 now", "that's all set", a value alone
#: ("12C"); no question, no request.
_AFTERWORD_RE = re.compile(r"(?i)^\W*(?:(?:it|that|they|everything)(?:'s|'re|\s+is|\s+are|\s+was)\s+[^,;.!?]{1,30}"
                           r"|all\s+(?:fine|good|ok|okay|well|set|done|sorted|green|clear|passing)"  # "... came yesterday, all fine"
                           # "checked the logs earlier, nothing suspicious" (round nineteen's variants)
                           r"|nothing\s+(?:suspicious|unusual|wrong|new|odd|strange|special|to\s+report|to\s+worry\s+about)"
                           r"|no\s+(?:issues|problems|errors|complaints|surprises)|looks?\s+(?:good|fine|ok|okay|great)"
                           r"|[\w-]{0,7}\d[\w-]{0,7})[\s.!,;]*$")  # a value holds a digit: "cancel" alone is a command


def logging_tools(catalog: Catalog) -> frozenset[str]:
    """Tools that keep a record of what happened: a name opening with log / track / journal, or a
    description that opens so or names a diary or a journal (``log_meal``, ``log_workout``)."""
    return catalog.derived("guard.logging_tools", _logging_tools)


def _logging_tools(catalog: Catalog) -> frozenset[str]:
    return frozenset(t.name for t in catalog
                     if (re.split(r"[^a-z]+", t.name.lower().split(":")[-1]) or [""])[0] in _LOGGING_NAME_WORDS
                     or _LOGGING_TEXT_RE.search(t.description or ""))


def without_venting(text: str) -> str:
    """``text`` with the words that vent a feeling taken out of its statements, when a request
    stands beside them; ``""`` when there is nothing to take out.

    "my family will riot if dinner is ruined again, how long do I roast a 2kg chicken?" locked onto
    a food-scandal tool ("outrage") and left the recipes out; "ugh this airline is a total disaster,
    I'm absolutely furious - is BA283 delayed or not?" offered a travel advisory ("riots,
    disasters") beside the flight status (a helper's variants of case route-01, whose note asks that
    emotional overlap with a descriptor never outrank the topic). Only the venting words go: the
    statement may hold the topic ("they're going to ruin my whole weekend with this rain, what's it
    doing tomorrow?" keeps its rain), and a command keeps every word ("delete those stupid spam
    mails"). The router scores what is left instead of the message, as it does with small talk.
    """
    pieces = [p for p in _PIECE_BREAK_RE.split(text.strip()) if p.strip()]
    venting = [_vents(p) for p in pieces]
    if len(pieces) < 2 or not any(venting) or all(venting):
        return ""
    kept = []
    for piece, vents in zip(pieces, venting):
        if vents:
            piece = _VENTING_PHRASE_RE.sub(" ", piece)
            piece = " ".join(w for w in piece.split() if not venting_word(re.sub(r"[^\w']", "", w.lower())))
        kept.append(piece)
    rest = " ".join(" ".join(kept).split())
    return rest if rest != " ".join(text.split()) and len(rest.split()) >= 2 else ""


#: A piece of a message that says what not to do: a negated verb at its start ("don't email him",
#: "I don't want to cancel", "no need to book"), or "not" before what is not meant ("not the
#: email"). Not "don't forget/miss/hesitate/worry/mind" (a request or small talk in a negation's words).
_NEGATED_PIECE_RE = re.compile(
    r"(?i)^\W*(?:(?:no|nah|ok|okay|so|and|but|please|pls|actually)\W+)*"
    r"(?:(?P<not>not)\s+|(?:(?:i|we)\s+(?:don['’]?t|do\s+not|didn['’]?t)\s+(?:want|need)\s+(?:you\s+)?to|"
    r"(?:you\s+)?(?:don['’]?t|do\s+not|dont|never)(?:\s+(?:need\s+to|have\s+to|bother(?:\s+to)?))?|"
    r"(?:there['’]?s\s+)?no\s+need\s+to)\s+(?!forget|miss|hesitate|let\s+me\s+forget|worry|mind)"
    r"(?P<verb>[\w'’-]+))")
#: What opens a definite object after a negated verb: kept, as the thing the request is about
#: ("don't delete the email from Sarah, just move it": the email is what is moved).
_OBJECT_OPENERS = frozenset("the that this these those my his her their our your its".split())
#: What follows a negated piece in the same breath: the request instead ("just", "only", "instead").
_NEGATION_CONTRAST_RE = re.compile(r"(?i)^\W*(?:but\s+|and\s+)?(?:just|only|instead|rather|simply)\b")
#: A piece that sets something aside: "instead of emailing him", "forget the email", "don't worry
#: about the lights" (round thirteen's variants, 2026-12-06: the tool set aside led the offer);
#: "rather than a timer", "as opposed to", "in place of" (round fourteen's).
_SET_ASIDE_PHRASES = (r"(?:instead\s+of|rather\s+than|as\s+opposed\s+to|in\s+place\s+of|anstatt|anstelle(?:\s+von)?|"
                      r"au\s+lieu\s+de|en\s+vez\s+de|en\s+lugar\s+de|invece\s+di)")
_SET_ASIDE_RE = re.compile(
    r"(?i)^\W*(?:(?:ok|okay|so|and|but|actually)\W+)*(?:" + _SET_ASIDE_PHRASES + r"\b|"
    r"(?:forget|skip|never\s+mind|"
    r"don['’]?t\s+worry|do\s+not\s+worry)\s+(?:about\s+)?(?:the|that|this|those|these|it|him|her|them|my|his|their)\b)")
#: Where a set-aside starts inside a piece (it then goes alone, :data:`_SET_ASIDE_RE`).
_SET_ASIDE_BREAK_RE = re.compile(r"(?i)\s+(?=" + _SET_ASIDE_PHRASES + r"\s)")
#: German needs no comma after a set-aside's article and noun ("Anstatt einer E-Mail setz bitte
#: 'Steuer machen' auf meine To-do-Liste": round fifteen's variants, 2026-12-07); one is put there.
_GERMAN_SET_ASIDE_RE = re.compile(r"\b(?i:anstatt|anstelle|statt)\s+(?i:einer|einem|eines|einen|eine|ein|des|der|dem|"
                                  r"den|die|das)\s+[A-ZÄÖÜ][\w-]*(?=\s+\w)")
#: The pronoun a request puts its object in ("just move it to the archive").
_OBJECT_PRONOUN_RE = re.compile(r"(?i)\b(?:it|them)\b")
#: A phrasal verb's particle after its object ("don't turn the lights off"): not part of the object.
_PARTICLES = frozenset("off on up down out away back over in".split())


def without_negated(text: str) -> str:
    """``text`` without what its pieces say not to do, when a piece that asks for something stands
    beside them; ``""`` when there is nothing to take out.

    "don't email him, just remind me to call Peter tomorrow at 5" led with the email tool, "don't
    delete the email from Sarah, just move it to the archive" with ``mail:delete``, and "I don't
    want to cancel, just tell me when it arrives" with ``cancel_order`` (round twelve's variants,
    2026-12-06, night): a bag of words reads "email", "delete" and "cancel" as what is asked for.
    A negated verb goes with its negation; the definite object after it is what the request acts
    on and takes the place of its pronoun ("move the email from Sarah to the archive": put in front,
    it read as a request to read the email, round thirteen's variants), and is left out where the
    request has none ("don't turn the lights off, turn the heating up"). A piece that opens with
    "not" or sets something aside (:data:`_SET_ASIDE_RE`: "instead of emailing him", "forget the
    email") goes whole. The router scores what is left instead of the message, as it does with
    venting (:func:`without_venting`). A message that only negates ("don't send it") is left
    whole: what it refers to is the policy's to read.
    """
    # a set-aside may close a piece: "remind me at 4pm to stretch rather than a timer"
    marked = _GERMAN_SET_ASIDE_RE.sub(lambda m: m.group(0) + ",", text.strip())
    pieces = [q for p in _PIECE_BREAK_RE.split(marked) for q in _SET_ASIDE_BREAK_RE.split(p) if q.strip()]
    found = [_NEGATED_PIECE_RE.match(p) or _SET_ASIDE_RE.match(p) for p in pieces]
    if len(pieces) < 2 or not any(found) or all(found):
        return ""
    kept, objects = [], []
    for piece, negated in zip(pieces, found):
        if not negated:
            kept.append(_NEGATION_CONTRAST_RE.sub("", piece))
        elif "verb" in negated.re.groupindex and negated.group("verb") and not negated.group("not"):
            rest = piece[negated.end():].strip(" ,;:-–—").split()
            while rest and rest[-1].lower() in _PARTICLES:  # "turn the lights off": the lights
                rest.pop()
            if rest and rest[0].lower() in _OBJECT_OPENERS:
                objects.append(" ".join(rest))
    rest = " ".join(" ".join(kept).split()).strip(" ,;:-–—")
    for thing in objects:  # only where the request has a place for it: appended, it was asked for
        rest = _OBJECT_PRONOUN_RE.sub(thing, rest, count=1)
    return rest if len(rest.split()) >= 2 else ""


#: Words that open a request, not a statement: a command's verb or a polite opener ("delete those
#: stupid spam mails" is a request whatever it holds).
_REQUEST_OPENERS = (READ_VERBS | WRITE_VERBS | frozenset().union(*ACTION_WORDS.values()) | frozenset(
    """please pls can could would will tell show give let remind text message email mail call ping find look
    help bring take open close turn switch make wake verify bitte kannst könntest zeig sag gib bestell bestelle
    """.split()) | QUESTION_WORDS)


_ASKS_RE = re.compile(r"(?i)\?|\b(?:(?:i|we)(?:'d| would)? (?:need|want|like)|i'd like|would (?:like|love)|let's|let us|please|pls|bitte|"
                      r"remind me|can you|could you|would you|will you|kannst du|könntest du)\b")


#: Words that join a piece to the one before ("..., then pause the music"): the verb after them opens it.
_CONNECTIVES = frozenset({"and", "then", "also", "now", "but", "so", "und", "dann"})


def asks_something(text: str) -> bool:
    """Whether ``text`` asks for something: a question mark, a wish ("I need", "I'd like", "let's",
    "please", "can you") or a piece that opens with a command's verb (:data:`_REQUEST_OPENERS`:
    "my brain is foggy, remind me to drink water"); not a bare statement ("I'm completely snowed
    under at work this week"). A word-list reading, no tagger."""
    if _ASKS_RE.search(text):
        return True
    for piece in _PIECE_BREAK_RE.split(text.strip()):
        words = [w.lower() for w in re.findall(r"[\w']+", piece)]
        while words and (words[0] in _GREETING_WORDS or words[0] in _CONNECTIVES):
            words = words[1:]
        if words and words[0] in _REQUEST_OPENERS and words[0] not in QUESTION_WORDS:
            return True
    return False


def venting_apart(text: str) -> tuple[str, str]:
    """``(request, venting)``: the pieces of ``text`` that vent a feeling or an opinion (:func:`_vents`:
    "politicians are all liars anyway. is it going to rain in Leeds tomorrow?") and the rest, each
    joined; ``("", "")`` unless both are there.

    The router scores both and lets no tool score more than the request alone gives it where the
    venting pulls it more (``router.without_pull``), once the request alone names a tool: "my boss is
    a tyrant and ruined my day; how long till the storm hits Boston?" ranked the politics tool
    first, by "tyrant", though :func:`without_venting` had taken "ruined" out (a helper's variants
    of case route-01, 2026-12-05). A question that points back at the statement ("they're going to
    ruin my whole weekend with this rain, what's it doing tomorrow?", route-01 itself) needs it:
    then ``("", "")``, as for a request that names no tool alone (the router's check).
    """
    pieces = [p for p in _PIECE_BREAK_RE.split(text.strip()) if p.strip()]
    if len(pieces) < 2:
        return "", ""
    venting = [_vents(p) for p in pieces]
    if not any(venting) or all(venting):
        return "", ""
    asks = [p for p, v in zip(pieces, venting) if not v]
    if any(_QUESTION_BACK_RE.match(p.strip()) for p in asks):  # "what's it doing tomorrow?" needs the rain
        return "", ""
    request, vented = " ".join(asks), " ".join(p for p, v in zip(pieces, venting) if v)
    return (request, vented) if len(request.split()) >= 2 else ("", "")


def without_greeting(text: str) -> str:
    """The request after greeting words in front of it, or ``""`` when there are none or nothing
    but greetings is left: "good morning, fix the null pointer bug in auth.py" -> "fix the null
    pointer bug in auth.py".

    The router scores this instead of the message, as it does the request after small talk
    (:func:`without_small_talk`, which leaves a bare greeting alone): a greeting carries no
    subject, yet it moves a short message's vector. With it, the relevance gate refused the
    example (P 0.19 against a floor of 0.23), and "morning, add milk to my shopping list" ranked
    ``clock:alarm`` first on the demo catalogue (a variant of case route-14).
    """
    pieces = _LEADING_BREAK_RE.split(text.strip())
    for cut in range(len(pieces) - 1, 0, -1):  # "hi there. hello, set an alarm": both greetings go
        front, rest = " ".join(pieces[:cut]), " ".join(pieces[cut:])
        if _greeting_only(front):
            return "" if _greeting_only(rest) or is_small_talk(rest) else rest
    return ""


def clauses(text: str, max_clauses: int = 6) -> tuple[str, ...]:
    """The requests a message joins ("grab X and store it as Y" -> both halves); ``()`` for one.

    Split at ``;``, ``and``/``then``/``und``/``dann`` and commas, and between a URL and the file it
    should be saved to ("pull down URL into a/b.png": a download, then "save it to a file");
    parts of fewer than two words
    join their neighbour ("salt and pepper" stays whole), and a question that points back
    ("..., what's it doing tomorrow?") is prefixed with the part before it. The router scores each part too and keeps each tool's best
    score, so a second request is not drowned by the first (case route-26, bad input row 30). At
    most ``max_clauses`` parts, the last holding whatever is left.
    """
    held, spans = _protect_quotes(text)  # a quoted message body is one piece
    # the path itself is left out: its folder and extension words pull unrelated tools ("save it to
    # ./config/local.yaml" scored run_shell 0.67 and a level tool 0.53 beside write_file 0.51; "save
    # it to a file": write_file 0.98 first, a helper's variant f10-r43 of route-26)
    held = _DOWNLOAD_TO_FILE_RE.sub(r"\1 and save it to a file", held)
    held = _SAVE_TO_PATH_RE.sub(r"\1 to a file", held)  # "... and save it to assets/logo.svg"
    held = _STORE_URL_IN_RE.sub(r"\1 \2 and \1 it \3 \4", held)  # "save URL into my documents"
    parts = [_restore_quotes(p, spans) for p in _CLAUSE_SPLIT_RE.split(held) if p and p.strip()]
    # a greeting or small talk is no request ("hi there, set an alarm for 6" is one)
    parts = [p for p in parts if not (is_greeting(p) or _greeting_only(p) or is_small_talk(p))]
    merged: list[str] = []
    for part in parts:
        if merged and (len(part.split()) < 2 or len(merged[-1].split()) < 2):
            merged[-1] = f"{merged[-1]} {part}"
        elif merged and _QUESTION_BACK_RE.match(part.strip()) and not IMPERSONAL_IT_RE.search(part):
            # read with what it points back at; "what time is it there?" asks its own question
            # (round fourteen's variants, 2026-12-07: after a weather clause the clock was left out)
            merged.append(f"{merged[-1]} {part.strip()}")
        else:
            merged.append(part.strip())
    if len(merged) < 2:
        return ()
    # a part with no verb of its own shares the first part's ("find flights to Madrid and a hotel near
    # the Prado": the hotel part was scored without "find", and book_hotel led search_hotels; round
    # eighteen's variants, 2026-12-07)
    verb = _opening_verb(merged[0])
    if verb and not _ASK_TO_WRITE_RE.match(_normalise_for_greeting(merged[0])):  # "tell me a joke and a riddle" is one
        merged[1:] = [f"{verb} {p}" if _VERBLESS_PART_RE.match(p) else p for p in merged[1:]]
    if len(merged) > max_clauses:  # the tail stays one part: a request after the cap is not dropped
        merged[max_clauses - 1:] = [" ".join(merged[max_clauses - 1:])]
    return tuple(merged)


#: A part that opens with an article and names a thing ("a hotel near the Prado", "the weather in Rome").
_VERBLESS_PART_RE = re.compile(r"(?i)^\W*(?:a|an|the|some)\s+[^\W\d_]+")
#: Command verbs a part without a verb of its own shares (:func:`clauses`); verbs only (the lexicon's
#: read verbs hold nouns of tool names: "weather", "status").
_SHARED_VERBS = frozenset("""find look search get check show list read view fetch retrieve calculate compute convert
    translate evaluate describe count open play pause stop start set send give book order buy reserve pay transfer
    download upload save write draft compose create add make put schedule remind cancel delete remove drop erase
    clear trash update change edit modify move rename replace reschedule postpone run execute install uninstall
    submit register record mark archive""".split())
#: What may stand before a request's first word: a greeting, "please" or "can you", and the "then",
#: "also" or "now" of a follow-up. One set for :func:`opening_word`'s readers (the clauses' shared
#: verb, the policy's CRUD action and opening word, its imperative test).
LEADING_FILLER_RE = re.compile(
    r"(?i)^(?:\W*(?:hey|hi|hiya|hello|yo|howdy|ok|okay|alright|so|morning|good (?:morning|afternoon|evening)|there|"
    r"please|pls|plz|kindly|also|then|now|(?:can|could|would|will) (?:you|u))\b)+\W*")


def opening_word(text: str) -> str:
    """The first word of ``text`` after a greeting, "please", "can you" or a follow-up's "then"
    (:data:`LEADING_FILLER_RE`), lower case ("list" of "please list my to-dos"), or ""."""
    match = re.match(r"[A-Za-z]+", LEADING_FILLER_RE.sub("", text.strip()))
    return match.group(0).lower() if match else ""


def _opening_verb(part: str) -> str:
    """The command verb a request part opens with (:func:`opening_word`) when it is one of
    :data:`_SHARED_VERBS`, or "". A closed list: a name opens a statement as a verb opens a command
    ("John is planning to invest ..., and the fund he is interested in ...", BFCL
    parallel_multiple_163, read "john the fund")."""
    word = opening_word(part)
    return word if word in _SHARED_VERBS else ""


#: A sentence end: ``.``, ``!`` or ``?`` (closing quotes and brackets may follow) before
#: whitespace and a capital, a digit or an opening quote. "Dr. Smith" splits too: a part of fewer
#: than three words is dropped, and a part only adds its best tool (``Router.last_intents``).
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(]?[A-ZÄÖÜ0-9])")

#: Most parts :func:`sentence_parts` returns, the first ones. BFCL parallel_multiple's messages
#: give up to 32 (median 6); each part is one more short text to embed (messages of six parts or
#: more: 84 ms p50 to route with them, 51 ms without, 2 cores). Every gold tool offered on
#: parallel_multiple-pooled: 0.870 with 10, 0.885 with 24 (before the gate filtered the parts).
MAX_SENTENCE_PARTS = 24


def sentence_parts(text: str, max_parts: int = MAX_SENTENCE_PARTS) -> tuple[str, ...]:
    """The requests of a message that asks in several sentences, each sentence split by
    :func:`clauses`; ``()`` for a message of one sentence.

    "Can you help me with a few things? First, I need the power of 7 raised to 3. Then, I want the
    probability of drawing a red card" gives three parts (the router's relevance gate keeps the
    first, which names no tool, from adding one). Parts of fewer than three words are dropped, and
    a part said again is kept once; at most ``max_parts``: the first ones and the last (a message
    repeating one request thousands of times is not embedded thousands of times, and a request
    after a pasted text is not lost behind it).

    Unlike :func:`clauses`, these parts never raise the message's own scores: they only add each
    part's best tool to the offer (issue 18 item 8). Scored like clauses, a short sentence lifts the
    top score and the calibrated ``subset_margin`` then drops the other requests' tools (measured:
    parallel_multiple-pooled 0.815 -> 0.785).
    """
    held, spans = _protect_quotes(text.strip())  # a quoted message body is one piece
    sentences = [_restore_quotes(s, spans).strip() for s in _SENTENCE_END_RE.split(held) if s and s.strip()]
    if len(sentences) < 2:
        return ()
    parts: dict[str, None] = {}  # a sentence said twice is one part; a greeting is none
    for sentence in sentences:
        parts.update((p, None) for p in (clauses(sentence) or (sentence,))
                     if len(p.split()) >= 3 and not is_greeting(p) and not is_small_talk(p) and not _greeting_only(p))
    found = list(parts)
    if len(found) > max_parts:  # the last part stays: a request after pasted text comes last
        found = found[:max_parts - 1] + found[-1:]
    return tuple(found)


# a number written with digits may touch its unit ("5min"); a number word is a word of its own
# ("am Freitag" is no "a m(inute)")
_DURATION_RE = re.compile(
    r"(?i)\b(?:\d+(?:[.,]\d+)?\s*-?\s*|(?:an?|one|two|three|four|five|ten|fifteen|twenty|thirty|forty|"
    r"fifty|sixty|ninety|half\s+an?|a\s+quarter\s+of\s+an?|ein(?:e|en)?|zwei|drei|fünf|zehn|halbe"
    # a few number words of the other glossed languages ("cinco minutos", "une heure", "dieci minuti")
    r"|un[ae]?|uno|dos|deux|due|tres|trois|tre|cinco|cinq|cinque|diez|dix|dieci|quince|quinze|quindici|"
    r"media|demi|mezz'?|een|twee|vijf|tien|jeden|dwie|pięć|dziesięć|en|ett|to|två|fem|tio|ti)"
    r"(?:\s+|\s*-\s*))(\w+)\b"
)
_COUNTDOWN_WORD_RE = re.compile(
    r"(?i)\b(?:timers?|countdowns?|count\s+down|stopwatch|stoppuhr|kurzzeitwecker"
    r"|temporizador(?:es)?|minuteur|minuterie|compte\s+à\s+rebours|cuenta\s+atrás|cronómetro|cronometro"
    r"|temporizzatore|conto\s+alla\s+rovescia|minutnik|stoper|äggklocka|nedtælling|nedtelling)\b")


def names_duration(text: str) -> bool:
    """True when ``text`` names a duration ("10 minutes", "half an hour", "5 min") or a countdown.

    A day or a clock time ("on Thursday", "at 09:05", "at 9") is a point in time, not a duration:
    then a countdown tool is not what was asked for (reported case route-27 and its #335).
    """
    if _COUNTDOWN_WORD_RE.search(text):
        return True
    return any(_duration_unit(m.group(1).lower()) and not _CLOCK_TIME_BEFORE_RE.search(text, 0, m.start())
               for m in _DURATION_RE.finditer(text))


def _duration_unit(word: str) -> bool:
    """Whether ``word`` after a number is a unit of :data:`~eris_lab.lexicon.DURATION_UNITS`, or one
    of five letters or more misspelt by one edit ("15 minuts", "30 secnds": the duration was missed
    and the timer demoted, round twelve's variants, 2026-12-06; short units stay exact, "min" is
    one edit from "mine")."""
    return word in DURATION_UNITS or (len(word) >= 5 and any(
        len(unit) >= 5 and one_edit_apart(word, unit) for unit in DURATION_UNITS))


#: A clock time said with its hour word: "à 7 heures", "a las 7 horas", "um 7 Uhr" ("at"
#: before the number): a point in time, as "at 9" is, not a duration.
_CLOCK_TIME_BEFORE_RE = re.compile(r"(?i)\b(?:at|à|a\s+las?|alle|às|om|o|um|kl\.?|klockan|klokken)\s+$")


def countdown_tools(catalog: Catalog) -> frozenset[str]:
    """Tools that run a countdown: "timer" or "countdown" in the name, or "countdown" in the description."""
    return catalog.derived("guard.countdown_tools", _countdown_tools)


def _countdown_tools(catalog: Catalog) -> frozenset[str]:
    out = set()
    for tool in catalog:
        words = set(name_words(tool.name))
        if words & {"timer", "countdown"} or re.search(r"(?i)\bcount\s*-?down\b", tool.description or ""):
            out.add(tool.name)
    return frozenset(out)


#: Name words of a tool that asks the user something back (``ask_user``, ``ask_clarification``,
#: ``request_clarification``, ``clarify``; reported cases route-05 and route-08's catalogues).
_ASKING_NAME_WORDS = frozenset({"ask", "clarify", "clarification", "clarifying", "clarifications"})
_ASKS_THE_USER_RE = re.compile(r"(?i)\b(?:user|human|clarif\w*|question|unclear|ambiguous)\b")


def asking_tools(catalog: Catalog) -> frozenset[str]:
    """Tools that ask the user something back: a name word of :data:`_ASKING_NAME_WORDS` and a
    description (or name) that speaks of the user, a question or clarifying ("Ask the user what
    they mean when the request is unclear.").

    The envelope's ``clarify`` status already lets the model ask; beside a strong hit such a tool
    only gives a small model a way out of the request (:func:`~eris_lab.router.without_asking`).
    """
    return catalog.derived("guard.asking_tools", _asking_tools)


def _asking_tools(catalog: Catalog) -> frozenset[str]:
    found = frozenset(t.name for t in catalog if set(name_words(t.name)) & _ASKING_NAME_WORDS
                      and _ASKS_THE_USER_RE.search(f"{t.name.replace('_', ' ')} {t.description or ''}"))
    return found if len(found) < len(catalog) else frozenset()


#: A fixed reply's description: "Canned reply explaining that the platform holds no human patient
#: data." (handed case route-03), "Canned reply explaining that the assistant gives no medical or
#: dietary advice." (a helper's variant of it, 2026-12-06).
_CANNED_REPLY_RE = re.compile(
    r"(?i)\b(?:canned|fixed|standard|boilerplate|stock|pre-?written|template)\s+(?:reply|replies|response|responses|"
    r"answer|answers|message|notice|disclaimer)\b|\b(?:reply|respond|answer)s?\s+with\s+a\s+(?:fixed|standard|canned)\b")


def canned_reply_tools(catalog: Catalog) -> frozenset[str]:
    """Tools that give a fixed reply (:data:`_CANNED_REPLY_RE`): like an asking tool, beside a
    clear request such a tool only gives a small model a way out of it (route-03's note: "never a
    fixed reply"; ``router.without_asking``). A catalogue whose every tool is one has none."""
    return catalog.derived("guard.canned_reply_tools", _canned_reply_tools)


def _canned_reply_tools(catalog: Catalog) -> frozenset[str]:
    found = frozenset(t.name for t in catalog if _CANNED_REPLY_RE.search(t.description or ""))
    return found if len(found) < len(catalog) else frozenset()


_CATCH_ALL_RE = re.compile(
    r"(?i)\b(?:run|execute|exec|evaluate|eval)\w*\s+(?:any|arbitrary|all\s+kinds\s+of)\b"
    r"|\b(?:any|arbitrary)\s+(?:\w+\s+)?(?:code|scripts?|commands?|programs?|python|shell|sql|javascript)\b"
    r"|\bscript\s+anything\b|\bdo\s+anything\b"
)


def catch_all_tools(catalog: Catalog) -> frozenset[str]:
    """Run-anything tools ("Run any Python code", "execute arbitrary shell commands").

    Their wide descriptions fit nearly every request, so they top the ranking by default and
    crowd out the dedicated tools (reported case route-26). Read from the description; a
    catalogue whose every tool is such a tool has none (nothing to prefer instead).
    """
    return catalog.derived("guard.catch_all_tools", _catch_all_tools)


def _catch_all_tools(catalog: Catalog) -> frozenset[str]:
    found = frozenset(t.name for t in catalog if _CATCH_ALL_RE.search(t.description or ""))
    return found if len(found) < len(catalog) else frozenset()
