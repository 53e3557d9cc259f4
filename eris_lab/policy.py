"""The policy layer: from scored hits to a decision of how wide to open the door.

``decide`` applies DESIGN.md's rules in a fixed order and reports which one decided:

1. dialog pairing from the session's recent successful tools ("delete that email" after
   ``mail:check``, "cancel that" after ``calendar:create``) -> that domain's verbs, the cue's verb
   first; agenda > mail > calendar > doc;
   then conversation (the short-input guard) -> nothing offered; then the relevance gate (knob
   ``relevance_floor``, off in the reference knobs) and the uncovered rule (knob
   ``uncovered_floor``, :func:`uncovered`): "no tool fits" -> nothing offered (never for an
   information question when the catalogue can search the web: :func:`open_question`);
2. split forced hits (>= ``forced_floor``) from embedding hits (with ``subset_margin`` below 2,
   only hits near the top, at most ``widen_k``);
3. a lone embedding hit below ``single_hit_floor`` is demoted (never GBNF-lock onto a coin flip);
   with nothing left, fall back to the full roster, (knob) that tool's domain cluster, or the
   ``widen_k`` best-scored tools (``ranked``: bounded widening);
4. near-tie within ``margin`` of the top: widen to the union of domain clusters only when the
   tied hits sharing an affinity group with the top span two or more domains; otherwise keep
   the ranked subset (an unrelated near-tie never dumps clusters);
5. append forced hits; 6. re-rank by the original cosine (cluster siblings inherit their domain's
   best score minus 1e-4; with ``subset_margin`` below 2, a union of clusters larger than
   ``widen_k`` keeps the clusters seated in rank order up to it); 7. empty -> full roster, nothing, or ``ranked`` (knob ``empty_fallback``).

After ``decide``, the router applies :func:`retry_failed` (a failed tool offered again),
:func:`with_intents` (each request of a joined message keeps its best tool), :func:`with_slots`
(tools whose required arguments the message cannot fill are not offered; none left: nothing),
:func:`with_memory` (tools of the previous turn kept when this message continues that work) and
:func:`with_added` (tools the catalogue just gained, first).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Iterable, Literal, Mapping, Sequence

import numpy as np

from .catalog import Catalog, base_name, domain_of, family_of, lexical_text, name_words
from .guard import (IMPERSONAL_IT_RE, LEADING_FILLER_RE, opening_word, SpellingIndex, apply_spelling, asks_something, countdown_tools, is_conversational, literal_idioms, logging_tools, mostly_german, names_code, names_duration, one_edit_apart, only_reports_done, only_short, only_vents, plain_gerund, read_weather, reports_problem, singular, support_tools,
                    foreign_by_function_words, foreign_by_letters, known_words, spelling_fixes, tool_keywords, unread_language, unread_script, without_condition,
                    without_small_talk, word_count)
from .knobs import Knobs
from .lexicon import (ACTION_WORDS, ENGLISH_CUES, GOODS_QUESTION_WORDS, GOODS_TOOL_RE, OPEN_SUBJECT_WORDS,
                      QUESTION_WORDS, READ_VERBS, REQUEST_WORDS, STOPWORDS)
from .slots import MissingSlot, has_evidence, required_slots

__all__ = [
    "Rule",
    "Kind",
    "Hit",
    "Decision",
    "decide",
    "decide_turn",
    "AFFINITY_GROUPS",
    "affinity_group",
    "SIBLING_OFFSET",
    "embedding_mask",
    "decision_keys",
    "retry_failed",
    "with_intents",
    "requested_action",
    "action_of",
    "action_order",
    "idle_countdowns",
    "with_memory",
    "with_added",
    "with_slots",
    "uncovered",
    "names_declared_keyword",
    "open_question",
    "MEMORY_MAX",
]


class Rule(StrEnum):
    """Rule ids a decision reports (DESIGN.md)."""

    CONVERSATIONAL = "CONVERSATIONAL"
    AGENDA_DIALOG_PAIRING = "AGENDA_DIALOG_PAIRING"
    MAIL_DIALOG_PAIRING = "MAIL_DIALOG_PAIRING"
    CALENDAR_DIALOG_PAIRING = "CALENDAR_DIALOG_PAIRING"
    DOC_DIALOG_PAIRING = "DOC_DIALOG_PAIRING"
    SINGLE_STRONG_HIT = "SINGLE_STRONG_HIT"
    RANKED_SUBSET = "RANKED_SUBSET"
    AFFINITY_MARGIN_UNION = "AFFINITY_MARGIN_UNION"
    LEXICAL_FORCED_ONLY = "LEXICAL_FORCED_ONLY"
    MIXED_EMBED_AND_LEXICAL = "MIXED_EMBED_AND_LEXICAL"
    UNSURE_FULL_ROSTER = "UNSURE_FULL_ROSTER"
    UNSURE_DOMAIN_CLUSTER = "UNSURE_DOMAIN_CLUSTER"
    #: Bounded widening (issue 18): unsure, so the ``widen_k`` best-scored tools, not the roster.
    UNSURE_RANKED = "UNSURE_RANKED"
    #: The relevance gate judged that no tool fits: nothing is offered (the grammar allows an answer).
    NO_TOOL_FITS = "NO_TOOL_FITS"
    EMPTY_AFTER_POLICY = "EMPTY_AFTER_POLICY"
    #: A tool call that failed is offered again for the user's reply (:func:`retry_failed`).
    FAILED_TOOL_RETRY = "FAILED_TOOL_RETRY"
    #: Tools the catalogue gained since the last user message, offered for the pending request
    #: the relevance gate had refused (:func:`with_added`).
    TOOLS_ADDED = "TOOLS_ADDED"
    #: The tools the policy chose need values the message does not give (:func:`with_slots`):
    #: nothing is offered, so the model asks for them instead of inventing them under the grammar.
    MISSING_ARGUMENTS = "MISSING_ARGUMENTS"
    #: A short follow-up naming an item a listing tool just listed, on a catalogue without dialog
    #: pairings: the listed item's tools first (:func:`with_listing`).
    LISTING_FOLLOW_UP = "LISTING_FOLLOW_UP"
    #: Not a policy rule: an offer built by hand (``Offer.given``) for a flag, a benchmark's fixed
    #: roster, a schema-recovery round or the meta-tools; ``decide`` never reports it.
    GIVEN = "GIVEN"


Kind = Literal["subset", "cluster", "full_roster", "conversational"]

#: Near-ties widen only inside one group (DESIGN.md "Affinity groups"); other domains stand alone.
AFFINITY_GROUPS: dict[str, frozenset[str]] = {
    "time": frozenset({"agenda", "clock", "calendar"}),
    "web": frozenset({"web", "news", "wiki"}),
    "knowledge": frozenset({"doc", "vault", "memory", "media"}),
    "system": frozenset({"system", "skills"}),
}
_GROUP_OF = {domain: group for group, members in AFFINITY_GROUPS.items() for domain in members}

#: Cluster siblings rank just under their domain's best hit (issue #2, policy step 6).
SIBLING_OFFSET = 1e-4


def affinity_group(domain: str) -> str:
    """The affinity group of ``domain``, or ``""`` when it stands alone."""
    return _GROUP_OF.get(domain, "")


@dataclass(frozen=True, kw_only=True, slots=True)
class Hit:
    """A tool and its score for one message: a cosine in [-1, 1], or 1.0 for a forced hit."""

    name: str
    score: float


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """What the policy decided, and why.

    Attributes
    ----------
    rule : Rule
        Which rule decided (DESIGN.md rule ids).
    kind : {"subset", "cluster", "full_roster", "conversational"}
    names : tuple of str
        Tools to offer, best first (every tool for ``full_roster``, none for ``conversational``).
    reason : str
        One human sentence, shown by the CLI and the notebooks.
    sources : tuple of (str, str)
        Names added after the rules, each with what added it (``("cd", "memory")``:
        :func:`with_memory`); empty when the rules chose every name.
    missing : tuple of (str, str)
        With ``MISSING_ARGUMENTS``: the best chosen tool and each required argument the message
        gave no value for, described (``("salon.find", "city (a place)")``); the prompt asks the
        model to ask for them (``prompt.slim``).
    """

    rule: Rule
    kind: Kind
    names: tuple[str, ...]
    reason: str = ""
    sources: tuple[tuple[str, str], ...] = ()
    missing: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, object]:
        """The ``decision`` of the command line's JSON records (``route``, ``decide``): ``rule``,
        ``kind``, ``names``, ``reason`` and ``sources`` (each a ``[name, what added it]`` pair)."""
        return {"rule": str(self.rule), "kind": self.kind, "names": list(self.names), "reason": self.reason,
                "sources": [list(s) for s in self.sources]}


# ---------------------------------------------------------------------------------------------
# Rule 1: dialog pairing
# ---------------------------------------------------------------------------------------------

# "that one", "the second one", "the oat milk one", "the one from the bank"
_ONE = r"(?:the|that|this)\s+(?:[\w'-]+\s+){0,3}?one"
#: An event named by its time is the item, as "the 3pm one" is ("call off the 3pm", "move my 10:30";
#: a tester's variants, 2026-12-05, after calendar:list).
_AT_TIME = r"(?:the|that|this|my)\s+\d{1,2}(?:[:.]\d\d(?:\s*(?:am|pm))?|\s*(?:am|pm|o['’]?clock|uhr))"
#: French and German object pronouns, French demonstratives and list places: "supprime-le",
#: "déplace-la à lundi", "je veux l'annuler", "verschieb ihn", "celui-ci", "ça", "la deuxième".
_FOREIGN_ANAPHOR = (r"-(?:le|la|les|lui)|l['’]\w+|ihn|cel(?:ui|le|les)(?:-ci|-là)?|ceux(?:-ci|-là)?|ça|cela|"
                    r"(?:le|la)\s+(?:premi[eè]re?|deuxi[eè]me|troisi[eè]me|derni[eè]re?|suivante?)")
_ANAPHOR = (r"\b(?:that|this|it|those|these|them|the\s+(?:last|same|previous)|das|dies\w*|den|die|es|"
            # an item of what was just listed: "read the first one", "open the second", "die erste"
            r"the\s+(?:first|second|third|fourth|fifth|next|other|top|latest|newest|oldest)|" + _ONE + "|"
            # by its place as a number: "scratch number two", "the 3rd", "#2" (round seventeen's variants)
            r"the\s+\d{1,2}(?:st|nd|rd|th)|(?:number|no\.|nr\.?|\#)\s*\d{1,2}|number\s+(?:one|two|three|four|five|six)|"
            + _AT_TIME + "|" + _FOREIGN_ANAPHOR + "|"
            r"(?:der|die|das|den)\s+(?:erste|zweite|dritte|nächste|letzte)\w*)(?!\w)")


@dataclass(frozen=True, slots=True)
class _Pairing:
    rule: Rule
    domain: str
    nouns: re.Pattern[str]
    verbs: tuple[tuple[re.Pattern[str], str], ...]
    #: Cues that point back at an item by their own words ("who else is coming?", "invite Anna
    #: too", "cross off the milk"): right after a listing of the domain or a tool that made or
    #: changed one of its items, they pair without an anaphor or a domain noun.
    bound: tuple[tuple[re.Pattern[str], str], ...] = ()

    def verb_tool(self, text: str) -> str:
        """The tool of the first verb or bound cue in ``text`` (verbs first), or ``""``."""
        return next((tool for pattern, tool in self.verbs + self.bound if pattern.search(text)), "")


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _cue(*alternatives: str) -> re.Pattern[str]:
    """One cue pattern: any of ``alternatives`` from a word start, not running on into a word (a
    cue may end in punctuation or at the message's end: "where is it?")."""
    return _rx(r"\b(?:" + "|".join(alternatives) + r")(?!\w)")


#: Verbs that delete, shared by every domain's pairing ("drop the 3pm one" after calendar:list was
#: the whole roster until 2026-12-04: calendar knew only cancel, delete, remove and call off);
#: French ones too ("supprime-le", "efface-la", "enlève ça": a tester's variants, 2026-12-05).
_DELETE = (r"delete|remove|drop|scrap|ditch|trash|bin|axe|kill|scratch|strike|toss|nuke|chuck|junk|wipe|zap|erase|purge|"
           r"lose|"
           # the item as the subject: "the 2nd one can go" (round seventeen's variants, 2026-12-07), "that one
           # can be binned" (round nineteen's)
           r"(?:can|could|should|must|has\s+to|needs?\s+to)\s+(?:go(?!\s+\w)|be\s+(?:deleted|removed|dropped|"
           r"scrapped|ditched|trashed|binned|axed|killed|scratched|struck|tossed|nuked|chucked|junked|wiped|zapped|"
           r"erased|purged|thrown\s+(?:away|out)))|"
           r"get\s+(?:rid|shot)(?:\s+of)?|throw\s+(?:away|out)|do\s+away\s+with|lösch\w*|losch\w*|entfern\w*|supprim\w*|effac\w*|enl[eè]v\w*|retir(?:e|er|ez)")
#: At most four words between a phrasal verb and its particle ("call the 3pm off", "cross the oat
#: milk one off", "hak das bitte ab"): "cross the street and then turn off the light" is no cue.
_OBJ = r"(?:\s+[\w'’:.-]+){0,4}?\s+"
#: Calling an item off: delete for an event, remove for a to-do. The particle may follow the object
#: ("call it off", "call the 3pm off"); French "annule", German "storniere", "sag ... ab".
_CANCEL = r"cancel\w*|call" + _OBJ + r"off|annul\w*|storn\w*|absag\w*"
#: A German separable particle at the end of its clause ("hak das ab", "lade Tom auch ein").
_CLAUSE_END = r"(?=\s*(?:[.,;!?]|bitte\b|danke\b|$))"
#: Marking a to-do done, by a phrasal verb split by its object ("cross it off", "tick that off",
#: "check the milk one off", "mark it as done"), in German ("hak das ab", "abhaken", "erledige es")
#: and French ("coche-la", "raye-le", "marque-le comme fait"): complete, not remove.
_DONE_PHRASAL = (r"(?:cross|strike|struck)\w*" + _OBJ + r"(?:off|out|through)|(?:tick|check)\w*" + _OBJ + r"off|"
                 r"(?:mark|marque|markier)[\w-]*" + _OBJ + r"(?:done|complete\w*|finished|fait\w*|termin[ée]\w*|"
                 r"erledigt)|"
                 r"hak\w*" + _OBJ + r"ab" + _CLAUSE_END)
_DONE = (_DONE_PHRASAL + r"|complete\w*|done|finish\w*|tick(?:s|ed|ing)?|erledig\w*|abhak\w*|coch\w*|"
         r"ray(?:e|er|ez)|c['’]est\s+fait")
#: A time an item is moved to ("make it 8 instead", "make that 4pm", "make it Friday").
_TIME = (r"(?:\d\w*(?:[:.]\d\d\w*)?|noon|midnight|tomorrow|tonight|today|next\s+\w+|"
         r"(?:mon|tue(?:s)?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?s?|half\s+past\s+\w+|"
         r"(?:half\s+an|an?|one|two|three|\d+)\s+(?:hours?|minutes?|mins?|days?|weeks?)\s+(?:later|earlier|sooner)|"
         r"earlier|later)")
_ZEIT = r"(?:\d|morgen|übermorgen|heute|nächst|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)\w*"
_THE_ITEM = r"(?:it|that|this|them|the\s+(?:[\w'-]+\s+){0,3}?one)"
#: Moving an item in time ("move the dentist one to Monday", "push it to Friday", "make that 4pm
#: instead", "verschiebe es auf Montag", "mach es um 8", "déplace-le à lundi", "reporte-la"):
#: calendar:update for an event, agenda:push for a to-do (agenda has no update verb).
_RESCHEDULE = (r"move|moved|reschedul\w*|postpon\w*|shift|push|bump|delay|defer|"
               r"make\s+" + _THE_ITEM + r"\s+(?:(?:at|on|for|to)\s+)?" + _TIME + r"|"
               r"make\s+" + _THE_ITEM + r"\b.{1,30}?\b(?:instead|rather)|"
               r"(?:change|set|switch)\s+" + _THE_ITEM + r"\s+(?:to|for)\s+" + _TIME + r"|"
               r"mach\w*\s+(?:es|das|ihn|sie)\s+(?:(?:lieber|doch)\s+)?(?:um|auf|am|für)\s+" + _ZEIT + r"|"
               r"(?:ver)?schieb\w*|verleg\w*|d[ée]plac\w*|d[ée]cal\w*|repouss\w*|report(?:e|er|ez|ons)")
#: A new time alone, said as a correction ("actually 8 instead", "no, Friday instead", "how about 9
#: instead?"): the item just made or listed, moved.
_INSTEAD = (r"^\W*(?:(?:no|nah|actually|sorry|wait|oh|ok|okay|hmm|um|better|rather|make\s+it|let['’]?s\s+do|"
            r"can\s+we\s+do|how\s+about|what\s+about|do)\W+)*(?:(?:at|on|to|for)\s+)?" + _TIME +
            r"\s+(?:instead|stattdessen|plutôt)\W*$")
#: Who comes is part of an event ("add Tom to it", "invite her to that one", "lade Tom auch ein",
#: "füge Anna hinzu"): calendar:update, which changes attendees.
_ATTEND = (r"invit\w*|einlad\w*|lad\w*" + _OBJ + r"ein" + _CLAUSE_END + r"|"
           r"add\s+(?:[\w'-]+\s+){1,3}?(?:to|on|into)\s+(?:it|that|this|them|the\s+(?:[\w'-]+\s+){0,2}?"
           r"(?:one|meeting|event|invite|invitation|appointment|call|guest\s+list|attendees))|"
           r"put\s+(?:[\w'-]+\s+){1,3}?on\s+(?:it|that|this|the\s+invite)|füg\w*" + _OBJ + r"hinzu")
#: The same without a pronoun: a name added "too" ("invite Anna too", "add Tom as well", "ajoute
#: Paul aussi") or an invitation that names only who ("invite Anna and Ben").
_ATTEND_BOUND = (r"(?:invit\w*|add|bring|include|ajout\w*|lad\w*)\s+"
                 r"(?:[\w'-]+(?:\s*,\s*|\s+and\s+|\s+und\s+|\s+et\s+|\s+)){1,3}?"
                 r"(?:too|as\s+well|also|along|auch|aussi)|"
                 r"invit\w*\s+(?:[\w'-]+(?:\s*,\s*|\s+and\s+|\s+)){0,2}[\w'-]+\s*[.!?]*$|"
                 r"(?:also|too)\s+(?:invit\w*|add|include|bring)")
#: A question about one event's who, where or when ("who else is coming?", "where is it taking
#: place?", "when does it start?", "wer kommt noch?", "où a-t-elle lieu ?"): calendar:get shows it.
#: The item a question is about: "it", "that (one)", "the dentist one".
_ITEM_REF = r"(?:it|(?:that|this)(?:\s+one)?|the\s+(?:[\w'-]+\s+){0,3}?one)"
_EVENT_QUESTION = (
    r"who(?:\s+else)?(?:\s+(?:is|are|was|will\s+be)|['’]s)\s+(?:coming|attending|invited|going|joining|there)|"
    r"who(?:['’]s|\s+is|\s+are|\s+else\s+is)\s+on\s+(?:it|that|this|the\s+invite|the\s+guest\s+list)|"
    r"who\s+else\s*[?.!]*$|is\s+(?!it\b)[\w'-]+\s+(?:coming|attending|invited|joining)|(?:what|which)\s+room|"
    r"(?:where|when)(?:\s+(?:is|was|will|does)|['’]s)\s+" + _ITEM_REF + r"\s+(?:be\s+)?"
    r"(?:taking\s+place|happening|being\s+held|held)|"
    r"where(?:\s+(?:is|was|will)|['’]s)\s+" + _ITEM_REF + r"(?:\s+(?:again|at|be))?\s*[?.!]*$|"
    r"when(?:\s+(?:is|was|does|will)|['’]s)\s+" + _ITEM_REF + r"(?:\s+(?:again|on|scheduled))?"
    r"(?:\s+(?:start|begin|end|finish)\w*)?\s*[?.!]*$|"
    r"what\s+time\s+(?:is|does|will)\s+" + _ITEM_REF + r"\s+(?:start|begin|end|finish)\w*|"
    r"how\s+long\s+(?:is|does|will)\s+" + _ITEM_REF + r"(?:\s+(?:last|take|go|run|be))?\s*[?.!]*$|"
    r"wer\s+(?:kommt|ist|nimmt)\s+(?:noch|alles|denn|dabei|teil)|wo\s+findet\s+(?:\w+\s+){1,2}statt|"
    r"wo\s+ist\s+(?:es|das)\s*[?.!]*$|wann\s+(?:ist|beginnt|fängt|endet)\s+(?:es|das|der|die)\b(?:\s+\w+)?\s*[?.!]*$|"
    r"qui\s+(?:d['’]autre\s+)?(?:vient|viendra|participe|est\s+invit\w*)|"
    r"o[uù]\s+(?:a-t-(?:il|elle)\s+lieu|est-ce|se\s+passe|a\s+lieu)")
#: A question about what is left on the to-do list ("what's left?", "when is it due?"): agenda:list.
_TODO_QUESTION = (r"when(?:\s+(?:is|was)|['’]s)\s+(?:it|that|this)\s+due|"
                  r"what(?:['’]s|\s+is)\s+(?:left|still\s+open|on\s+(?:it|there))|"
                  r"what\s+else\s+is\s+(?:on\s+(?:it|there|the\s+list)|left|open)|"
                  r"how\s+many\s+(?:\w+\s+)?(?:are\s+)?(?:left|open)|was\s+(?:ist|steht)\s+noch\s+(?:an|offen|drauf)")
#: Who sent a message and when ("who sent it?", "who is that one from?"): mail:read shows it.
_MAIL_QUESTION = (r"who\s+(?:sent|wrote)\s+(?:it|that|this)|"
                  r"who(?:['’]s|\s+is|\s+was)\s+(?:it|that|this)(?:\s+one)?\s+from|"
                  r"when\s+did\s+(?:it|that|this)\s+(?:arrive|come\s+in)|von\s+wem\s+(?:ist|kommt)\s+(?:es|das|die)")
#: What an item is about ("what's it about?", "tell me more about it"): the tool that reads it.
_ABOUT = (r"what(?:['’]s|\s+is|\s+was)\s+(?:it|that|this)(?:\s+one)?\s+about|"
          r"tell\s+me\s+(?:more\s+)?about\s+(?:it|that|this)")
#: A question about what an item says ("what does the second one say about pricing"): the verb that
#: reads it (a helper's variants, 2026-12-04, after doc:list, mail:check and calendar:list).
_SAYS = r"says?|said|mentions?|covers?|contains?|talks?\s+about|steht|sagt"

# The same cues in Swedish, Danish, Norwegian (Bokmål), Czech and Turkish: "ta bort den andra" and
# "slet den første" after agenda:list, "zruš tu schůzku" after calendar:list, "ikincisini sil"
# after doc:list were the whole roster or conversation (a tester's fresh variants f10-p07/p10/p13/
# p14/p18/p20, 2026-12-06): the cues knew none of these languages. Each cue kind of each language
# below is joined into the ``_MORE_*`` cue of its kind; each language's verbs together
# (``_NORDIC_VERB``, ``_CZECH_VERB``, ``_TURKISH_VERB``) also tell where its definite object
# stands (:func:`_definite_object_tool`). Turkish verbs take a polite or question ending
# ("silin", "siler misin", "ertelebilir misin").
_TURKISH_POLITE = (r"(?:[iıuü]n(?:[iıuü]z)?|[aeıiuü]?r\s+m[iıuü]s[iıuü]n(?:[iıuü]z)?|"
                   r"y?[ae]bilir\s+m[iı]s[iı]n(?:[iı]z)?)?")
#: sv/nb "flytta", "flytt", da "flyt": moving an event in time or a message to a folder.
_NORDIC_MOVE = r"flytt?(?:a|e)?"
#: Deleting: sv ta bort/radera/stryk/släng, da slet/fjern/smid ... ud, nb slett/fjern/ta bort.
_NORDIC_DELETE = (r"(?:ta|tag)\s+bort|(?:ta|tag)" + _OBJ + r"(?:bort|væk|vekk)" + _CLAUSE_END + r"|radera\w*|"
                  r"stryk\w*|släng\w*|slet(?:t|te|tes)?|fjern\w*|smid\w*" + _OBJ + r"ud" + _CLAUSE_END)
#: Calling off: sv avboka/ställ in/avbryt, da aflys/afbryd, nb avlys/avbestill/avbryt.
_NORDIC_CANCEL = r"avboka\w*|ställ\s+in|a[fv]lys\w*|avbestill\w*|avbryt|afbryd"
#: Marking done: sv bocka av/markera som klar, da afkryds/marker som færdig, nb huk av/kryss av.
_NORDIC_DONE = (r"(?:bocka|huk|kryss)\w*\s+av|(?:bocka|huk|kryss)\w*" + _OBJ + r"av" + _CLAUSE_END + r"|"
                r"afkryds\w*|klarmarkera\w*|mark[ée]r\w*" + _OBJ + r"(?:som\s+)?(?:klar\w*|gjord\w*|gjort|"
                r"f[äæ]rdig\w*|ferdig\w*|udført|utført)")
#: Moving in time: sv flytta/skjut upp/boka om/senarelägg, da flyt/ryk/udskyd, nb flytt/utsett/skyv.
_NORDIC_RESCHEDULE = (_NORDIC_MOVE + r"|skjut\w*\s+upp|skjut\w*" + _OBJ + r"upp" + _CLAUSE_END + r"|boka\s+om|"
                      r"ombok\w*|senarelägg\w*|tidigarelägg\w*|ryk(?:ke)?|udskyd\w*|utsett\w*|skyv\w*")
#: Answering or passing on: sv svara/besvara/vidarebefordra, da/nb svar/besvar/videresend.
_NORDIC_REPLY = r"svar(?:a|e)?|besvar\w*|vidarebefordra\w*|skicka\s+vidare|videresend\w*"
#: Reading or showing: sv läs/öppna/visa, da læs/åbn/vis, nb åpne/vis and "les" only before its
#: object ("les den", "les e-posten"): "les" is a French article.
_NORDIC_READ = (r"l[äæ]s(?:a|e)?|öppna|åbn(?:e)?|åpn(?:e)?|vis(?:a|e)?|"
                r"les(?=\s+(?:den|det|dem|denne|dette|disse|meg|[^\W\d_]+(?:en|et|ene|a))\b)")
#: Changing an event: sv ändra/byt namn/döp om/uppdatera/bjud in, da ændr/omdøb/opdater,
#: nb endre/oppdater/gi nytt navn.
_NORDIC_CHANGE = (r"ändra\w*|ændr\w*|endr\w*|byt\s+namn|d[öø]p\w*\s+om|omdøb\w*|(?:upp|opp|op)dater\w*|"
                  r"gi\s+nytt\s+navn|bjud\w*\s+in")
_NORDIC_ARCHIVE = r"arkiv\w*"
#: Czech "přesuň" and "posuň": an event in time, or a message to a folder.
_CZECH_MOVE = r"p[řr]esu[ňn]\w*|posu[ňn]\w*"
#: Deleting: smaž/vymaž/odstraň/odeber/vyhoď; calling off: zruš.
_CZECH_DELETE = r"(?:vy)?sma[žz]\w*|odstra[ňn]\w*|odeb(?:er|ra)\w*|vyho[ďd]\w*"
_CZECH_CANCEL = r"zru[šs]\w*"
#: Marking done: odškrtni, dokonči, označ jako hotové/splněné.
_CZECH_DONE = (r"od[šs]krtn\w*|dokon[čc]i\w*|ozna[čc]\w*" + _OBJ +
               r"(?:(?:jako|za)\s+)?(?:hotov\w*|spln[ěe]n\w*|dokon[čc]en\w*|vy[řr][íi]zen\w*)")
#: Moving in time: přesuň/posuň/odlož/přeplánuj ("přelož" also means "translate").
_CZECH_RESCHEDULE = _CZECH_MOVE + r"|odlo[žz]\w*|p[řr]epl[áa]nuj\w*"
#: Answering or passing on: odpověz/odepiš/přepošli.
_CZECH_REPLY = r"odpov[ěe]z\w*|odpov[ěe]d[ěe]t|odepi[šs]\w*|p[řr]epo[šs]l\w*|p[řr]eposlat"
#: Reading or showing: přečti/otevři/ukaž/zobraz.
_CZECH_READ = r"p[řr]e[čc]t\w*|otev[řr]\w*|uka[žz]\w*|zobraz\w*"
#: Changing an event: změň/uprav/přejmenuj/aktualizuj, inviting: pozvi.
_CZECH_CHANGE = r"zm[ěe][ňn]\w*|uprav\w*|p[řr]ejmenuj\w*|aktualizuj\w*|pozv(?:i|ěte|ete)\w*"
#: Turkish "taşı": an event in time, or a message to a folder.
_TURKISH_MOVE = r"ta[şs][ıi]" + _TURKISH_POLITE
#: Deleting: sil/kaldır/çıkar; calling off: iptal (et).
_TURKISH_DELETE = r"(?:sil|kald[ıi]r|[çc][ıi]kar)" + _TURKISH_POLITE
_TURKISH_CANCEL = r"iptal(?:\s+(?:et|ed)" + _TURKISH_POLITE + r")?"
#: Marking done: tamamla, "tamamlandı/yapıldı olarak işaretle".
_TURKISH_DONE = (r"tamamla\w*|(?:tamamland[ıi]|yap[ıi]ld[ıi]|bitti)\s+olarak\s+i[şs]aretle\w*")
#: Moving in time: ertele/taşı/kaydır.
_TURKISH_RESCHEDULE = _TURKISH_MOVE + r"|ertele\w*|kayd[ıi]r\w*"
#: Answering or passing on: cevapla/yanıtla/cevap ver/ilet.
_TURKISH_REPLY = r"cevapla\w*|yan[ıi]tla\w*|(?:cevap|yan[ıi]t)\s+ver\w*|ilet" + _TURKISH_POLITE
#: Reading or showing: oku/aç/göster.
_TURKISH_READ = r"oku(?:r\s+mus\w*|y\w*|n)?|a[çc](?:ar\s+m[ıi]s[ıi]n|abilir\s+mi\w*|[ıi]n)?|göster\w*"
#: Changing an event: değiştir/güncelle/davet et.
_TURKISH_CHANGE = r"de[ğg]i[şs]tir\w*|güncelle\w*|davet\s+et\w*|yeniden\s+adland[ıi]r\w*"
_TURKISH_ARCHIVE = r"ar[şs]ivle\w*"
#: Each language's verbs of the cues above, for where its definite object stands.
_NORDIC_VERB = "|".join((_NORDIC_DELETE, _NORDIC_CANCEL, _NORDIC_DONE, _NORDIC_RESCHEDULE, _NORDIC_REPLY,
                         _NORDIC_READ, _NORDIC_CHANGE, _NORDIC_ARCHIVE))
_CZECH_VERB = "|".join((_CZECH_DELETE, _CZECH_CANCEL, _CZECH_DONE, _CZECH_RESCHEDULE, _CZECH_REPLY, _CZECH_READ,
                        _CZECH_CHANGE))
_TURKISH_VERB = "|".join((_TURKISH_DELETE, _TURKISH_CANCEL, _TURKISH_DONE, _TURKISH_RESCHEDULE, _TURKISH_REPLY,
                          _TURKISH_READ, _TURKISH_CHANGE, _TURKISH_ARCHIVE))

# The same cues in Spanish, Italian, Portuguese, Polish and Dutch: "borra la de la leche de avena"
# and "usuń ten z mlekiem" after agenda:list, "cancella la seconda" after mail:check, "odpowiedz
# mu" after mail:read were the whole roster or conversation (a helper's variants, 2026-12-06): the
# cues knew English, French and German only. Stems take their enclitics ("bórralo", "spostala").
#: Deleting: borra/elimina/quita, cancella/rimuovi/togli, apaga/exclui/deleta/tira, usuń/skasuj/
#: wyrzuć/wymaż, verwijder/wis/schrap/gooi ... weg/haal ... weg.
_MORE_DELETE = (r"b[oó]rr[aeáé]\w*|elim[ií]n\w*|qu[ií]t(?:a|ar|e|en|ad)(?:l[oa]s?|me)?|"
                r"cancell(?:a|are|ate|i)(?:l[aoie]|gli)?|rimuov\w*|togli\w*|"
                r"apag\w*|exclu[ai]\w*|remov[ae]\w*|delet[ae]\w*|tir(?:a|e|ar)(?:l[oa]s?|-[oa]s?)?|"
                r"usu[ńn]\w*|(?:wy|s)?kasuj\w*|wyrzu[ćc]\w*|wyma[żz]\w*|"
                r"verwijder\w*|wis(?:sen)?|schrap\w*|(?:gooi|haal)\w*" + _OBJ + r"weg"
                + "|" + _NORDIC_DELETE + "|" + _CZECH_DELETE + "|" + _TURKISH_DELETE)
#: Calling off: cancela/cancélala, annulla/disdici, anuluj/odwołaj, annuleer/zeg ... af.
_MORE_CANCEL = (r"canc[eé]l\w*|anul\w*|disdi\w*|odwo[łl]\w*|afzeg\w*|zeg\w*" + _OBJ + r"af" + _CLAUSE_END
                + "|" + _NORDIC_CANCEL + "|" + _CZECH_CANCEL + "|" + _TURKISH_CANCEL)
#: Marking a to-do done: "márcala como hecha", "segna la prima come fatta", "marca essa como feita",
#: "oznacz jako zrobione", "markeer als gedaan"; tachar/spuntare/riscar/odhaczyć/afvinken.
_MORE_DONE = (r"(?:m[aá]rc|segn|oznacz|markeer)\w*(?:-[oa]s?)?" + _OBJ +
              r"(?:(?:como|come|jako|als)\s+)?(?:hech[oa]s?|fatt[oa]|feit[oa]s?|complet\w*|conclu[ií]d[oa]s?|"
              r"terminad[oa]s?|zrobion\w*|wykonan\w*|gedaan|klaar|voltooid|afgerond)|"
              r"complet(?:a|ar|ad[oa]|at[oa]|e)(?:l[oa]|-[oa])?|conclu[ií](?:r|\w*-[oa])?|termin(?:a|ar)(?:l[oa])?|"
              r"tach(?:a|ar|e)(?:l[oa])?|spunt\w*|depenn\w*|risc(?:a|ar)(?:-[oa])?|"
              r"odhacz\w*|skre[śs]l\w*|(?:vink|streep)\w*" + _OBJ + r"(?:af|door)" + _CLAUSE_END + r"|afvink\w*"
              + "|" + _NORDIC_DONE + "|" + _CZECH_DONE + "|" + _TURKISH_DONE)
#: Moving in time: mueve/pospón/aplaza/retrasa/adelanta, sposta/rimanda/rinvia/posticipa, adia/
#: remarca/reagenda/empurra, przesuń/przełóż/przenieś/odłóż, verplaats/verzet/verschuif/stel ... uit.
_MORE_RESCHEDULE = (r"mu[eé]v[ae]\w*|mover\w*|posp[oó]n\w*|apl[aá]z\w*|retr[aá]s\w*|adelant\w*|reprogram\w*|"
                    r"spost\w*|rimand\w*|rinvi\w*|posticip\w*|anticip(?:a|are|al[aoie])|"
                    r"mov[ae](?:-[oa]s?)?|adi(?:a|e|ar)(?:-[oa]s?|l[oa])?|remarc\w*|reagend\w*|empurr\w*|antecip\w*|"
                    r"przesu[ńn]\w*|prze[łl][oó][żz]\w*|przenie[śs]\w*|od[łl][oó][żz]\w*|"
                    r"verplaats\w*|verzet\w*|verschuif\w*|schuif\w*|verdaag\w*|uitstel\w*|stel\w*" + _OBJ + r"uit"
                    + "|" + _NORDIC_RESCHEDULE + "|" + _CZECH_RESCHEDULE + "|" + _TURKISH_RESCHEDULE)
#: Answering or passing on a message: responde/contesta/reenvía, rispondi/inoltra, responde-lhe/
#: encaminha, odpowiedz/odpisz/przekaż, antwoord/beantwoord/reageer/stuur ... door.
_MORE_REPLY = (r"resp[oó]nd\w*|contest\w*|reenv[ií]\w*|rispond\w*|inoltr\w*|encaminh\w*|"
               r"odpowi\w*|odpisz\w*|przeka[żz]\w*|antwoord\w*|beantwoord\w*|reageer\w*|doorstu\w*|"
               r"stuur\w*" + _OBJ + r"door"
               + "|" + _NORDIC_REPLY + "|" + _CZECH_REPLY + "|" + _TURKISH_REPLY)
#: Reading or showing: lee/abre/muestra, leggi/apri/mostra, lê/leia/abre/mostra, przeczytaj/otwórz/
#: pokaż, lees/open/toon/laat ... zien.
_MORE_READ = (r"l[eé]e(?:r|l[oa]s?|me\w*)|lee(?=\s+(?:el|la|los|las|mis?|est[eoa]s?|es[eoa]s?|aquel\w*)\b)|"
              r"legg\w*|leia\w*|l[eê](?:-[oa])|[aá]br(?:e|a|ir)(?:l[oa]s?|-[oa]s?)?|"
              r"apr(?:i|ire|ite)(?:l[aoie]|mi)?|mu[eé]str\w*|mostr\w*|ense[ñn]a\w*|"
              r"(?:prze)?czytaj\w*|otw[oó]rz\w*|poka[żz]\w*|lees\w*|toon\w*|laat\w*" + _OBJ + r"zien"
              + "|" + _NORDIC_READ + "|" + _CZECH_READ + "|" + _TURKISH_READ)
#: Changing an event: cambia/modifica/renombra/actualiza, rinomina/aggiorna, muda/altera/atualiza,
#: zmień/edytuj/aktualizuj, wijzig/verander/hernoem/pas ... aan; inviting: convida/zaproś/nodig ... uit.
_MORE_CHANGE = (r"cambi\w*|renombr\w*|actualiz\w*|rinomin\w*|aggiorn\w*|mud(?:a|e|ar)(?:-[oa]|l[oa])?|"
                r"alter[ae]\w*|renome\w*|atualiz\w*|zmie[ńn]\w*|edytuj\w*|(?:za)?aktualizuj\w*|wijzig\w*|"
                r"verander\w*|hernoem\w*|pas\w*" + _OBJ + r"aan" + _CLAUSE_END + r"|"
                r"convid\w*|zapro[śs]\w*|uitnodig\w*|nodig\w*" + _OBJ + r"uit"
                + "|" + _NORDIC_CHANGE + "|" + _CZECH_CHANGE + "|" + _TURKISH_CHANGE)
#: Archiving a message: arquiva, (z)archiwizuj (archiva/archivia/archiveer are "archiv...").
_MORE_ARCHIVE = (r"arquiv\w*|(?:z)?archiwiz\w*"
                 + "|" + _NORDIC_ARCHIVE + "|" + _TURKISH_ARCHIVE)
#: Verb stems that take an object pronoun at their end ("bórralo", "cancélala", "spostalo",
#: "rispondigli", "muéstramela", "apaga-o", "responde-lhe"): the word itself points back.
_CLITIC_STEMS = (r"b[oó]rr|elim[ií]n|qu[ií]t|cancel|canc[eé]l|anul|annull|rimuov|togl|spost|rimand|rinvi|"
                 r"posticip|mu[eé]v|posp[oó]n|apl[aá]z|retr[aá]s|adelant|reprogram|cambi|modific|resp[oó]nd|"
                 r"rispond|contest|reenv[ií]|inoltr|legg|[aá]br|apr|mu[eé]str|mostr|ense[ñn]|m[aá]rc|"
                 r"segn|tach|spunt|archiv|arquiv|complet|apag|exclu|remov|delet|adi|remarc|mov|encaminh")
_CLITIC = (r"(?:" + _CLITIC_STEMS + r")\w*?(?:[aeiouáéíó](?:l[oa]s?|l[ei]s?|gli|mel[oa]s?|sel[oa]s?)|"
           r"-(?:[oa]s?|lhes?|l[oa]s?))")
#: Polish verbs of the cues above: a short pronoun that is an English or French word too ("to",
#: "go", "je", "ta", "te") points back only beside one ("przełóż to na jutro", "to usuń").
_POLISH_VERB = (r"(?:usu[ńn]|(?:wy|s)?kasuj|wyrzu[ćc]|wyma[żz]|anuluj|odwo[łl]|odhacz|skre[śs]l|oznacz|"
                r"przesu[ńn]|prze[łl][oó][żz]|przenie[śs]|od[łl][oó][żz]|odpowi|odpisz|przeka[żz]|"
                r"(?:prze)?czytaj|otw[oó]rz|poka[żz]|zmie[ńn]|edytuj|(?:za)?aktualizuj|zapro[śs]|(?:z)?archiwiz)\w*")
#: Items pointed back at: ordinals with their article ("la segunda", "il primo", "o último", "de
#: tweede", Polish "drugą", "ostatni"), "the one of" ("la de la leche", "quello del latte", "o do
#: dentista"), demonstratives ("ese", "quella", "isso", "ten", "tego", "deze", "dat") and object
#: pronouns ("mu", "jej", "ją", "hem", "haar", "het", "ele", "lui", "lei"). Swedish, Danish and
#: Norwegian "den andra", "den første" are German "den" of :data:`_ANAPHOR`; their "det", "dessa",
#: "henne", "ham" and bare ordinals ("första mejlet") are here, with Czech ordinals and
#: demonstratives ("druhou", "poslední", "tuhle") and Turkish pronouns and ordinals, which take
#: their case ending ("onu", "bunu", "ikincisini", "ilkini", "sonuncuyu"; f10-p07/p10/p20).
_MORE_ANAPHOR = (
    r"\b(?:(?:el|la|los|las|il|lo|gli|le|i|o|a|os|as)\s+(?:primer[oa]?s?|segund[oa]s?|tercer[oa]?s?|cuart[oa]s?|"
    r"[uú]ltim[oa]s?|siguiente|pr[oó]xim[oa]s?|prim[oa]|prim[ie]|second[oa]|second[ie]|terz[oa]|quart[oa]|"
    r"successiv[oa]|terceir[oa]s?|quint[oa]s?|anterior)|"
    r"(?:el|la|los|las)\s+(?:de|del|que|con)|quell[oaie]|quel|quest[oaie]|(?:il|lo)\s+(?:di|del|della|con|che)|"
    r"(?:o|os|as)\s+(?:d[oa]s?|de|que|com)|a\s+(?:d[oa]s?|que|com)|"
    r"es[eoa]s?|est[eoa]s?|[ée]s[eoa]s?|[ée]st[eoa]s?|aquel(?:l[oa]s?)?|aquell[oa]s?|ess[ea]s?|isso|isto|"
    r"aquel[ea]s?|aquilo|ele|ela|eles|elas|lui|lei|ci[oò]|"
    r"tę|tego|tej|tym|tamt\w*|tą|ją|jego|jej|jemu|mu|niego|niej|nią|ten\s+z(?:e)?|l[eé]e(?:mel|l)[oa]s?|"
    r"pierwsz\w*|drug(?:i|a|ą|ie|iego|iej)|trzeci\w*|czwart\w*|ostatni\w*|nast[eę]pn\w*|poprzedni\w*|"
    r"(?:de|het)\s+(?:eerste|tweede|derde|vierde|vijfde|laatste|volgende|vorige|bovenste|onderste)|"
    r"het|hem|haar|deze|dat|" + _CLITIC + r"|"
    + _POLISH_VERB + r"\s+(?:to|go|je|ta|te|ten)|(?:to|go|je|ta|te|ten)\s+" + _POLISH_VERB + r"|"
    # sv/da/nb
    r"det|dem|denna|detta|dessa|denne|dette|disse|honom|henne|ham|hende|f[öø]rsta|første|andra|andre|anden|"
    r"tredje|fj[äe]rde|femte|sista|siste|sidste|n[äæ]sta|neste|næste|senaste|seneste|förra|forrige|"
    # cs: "to", "tu", "ten", "ho", "je", "ji" are words of other languages too, so only beside a
    # Czech verb ("zruš tu schůzku", "smaž to", "odpověz jí"; f10-p14)
    r"tuhle|tohle|tenhle|tamtu|tamto|tamten|tuto|toto|tento|první|druh(?:ou|ý|á|é|ého|ém)|třetí\w*|"
    r"čtvrt(?:ou|ý|á|é|ého)|pát(?:ou|ý|á|é|ého)|posledn(?:í|ího|ím)|předchoz(?:í|ího)|"
    r"(?:" + _CZECH_VERB + r")\s+(?:to|tu|ten|ho|je|ji|jí|jim)|(?:to|tu|ten|ho|je|ji)\s+(?:" + _CZECH_VERB + r")|"
    # tr: "son" (last) only before a noun in the accusative ("son mesajı"): it is a French word
    r"onu|bunu|şunu|onlar[ıi]|bunlar[ıi]|şunlar[ıi]|ona|buna|şuna|bu|şu|"
    r"(?:ilk|birinci|ikinci|üçüncü|dördüncü|beşinci|sonuncu)(?:s?[iıuü](?:n[iıuü])?|y[iıuü]|n[iıuü])?|"
    r"son\s+[^\W\d_]+[ıiuü])(?!\w)")
#: The article of a thing named right after a verb ("push the standup back", "cancela la del
#: martes", "verplaats de standup", "adia o standup"): right after that domain's listing, the named
#: thing is one just listed (a helper's variants, 2026-12-06). Portuguese "a" only before "do/da/de"
#: ("adia a consulta do dentista"): "move a file" is no item.
_DEFINITE_OBJECT_RE = _rx(r"\s+(?:(?:to|a|al|ai|alla|ao|aan|naar)\s+)?"
                          r"(?:(?:the|el|la|los|las|il|lo|gli|le|les|o|os|as|de|het|der|die|das|den|dem)\s+\w|"
                          r"l['’]\w|a\s+\w+(?:\s+\w+)?\s+d[oae]s?\b)")
#: Swedish, Danish and Norwegian put the article at the noun's end ("flytta tandläkaren till
#: fredag", "slet mødet", "svar på e-posten"): a definite ending on the word right after one of
#: their verbs (:data:`_NORDIC_VERB`), not "igen" (again).
_SUFFIX_DEFINITE_OBJECT_RE = _rx(r"\s+(?:(?:på|till|til|om)\s+)?(?!(?:igen|igjen)\b)[^\W\d_]{2,}(?:en|et|na|ne)\b")
#: Turkish puts a definite object before its verb (:data:`_TURKISH_VERB`), in the accusative
#: ("dişçiyi ertele", "Ali'nin mailini sil"), at most two words (a time: "dişçiyi cumaya ertele")
#: before it: one or two words, the last ending in ı/i/u/ü.
_ACCUSATIVE_OBJECT_RE = _rx(r"(?:^|\s)((?:[^\W\d_]+['’]?[^\W\d_]*\s+)?[^\W\d_]+['’]?[^\W\d_]*[ıiuü])"
                            r"(?:\s+[\w'’]+){0,2}\s+$")
_NORDIC_VERB_RE = _rx(_NORDIC_VERB)
_TURKISH_VERB_RE = _rx(_TURKISH_VERB)
#: The words of the definite-object patterns before the named thing.
_ARTICLE_WORDS = frozenset("the to a al ai alla ao aan naar el la los las il lo gli le les l o os as de het der die "
                           "das den dem på till til om".split())

#: A reply given with what it says ("svara att jag kommer", "odpověz, že přijdu", "antworte, dass
#: ich komme", "geliyorum diye cevap ver", "svar ja"): right after a message was read, the one
#: answered is that one (f10-p18). English "reply that ..." paired already: "that" is an anaphor.
_REPLY_SAYING = (r"(?:reply|answer|respond|antwort\w*|beantwort\w*|r[ée]ponds?|" + _MORE_REPLY + r")\s*[,:]?\s*"
                 r"(?:att|at|dass|que|che|że|že|yes|no|ja|nej|nei|ano|ne|evet|hayır)(?!\w)|"
                 r"diye\s+(?:cevap|yan[ıi]t)\w*")

#: Continuation cues, in priority order (agenda > mail > calendar > doc; issue #2). A cue needs
#: an anaphor or a domain noun, and a verb, that domain among the recent tools: a bare "remove it"
#: without one never pairs. A bound cue ("who else is coming?") or a bare command ("abhaken") needs
#: neither, right after a listing or a making of the domain (:func:`_pairing_on_last`).
PAIRINGS: tuple[_Pairing, ...] = (
    _Pairing(
        Rule.AGENDA_DIALOG_PAIRING, "agenda",
        _rx(r"\b(?:agenda|reminders?|to-?dos?|tasks?|items?|entry|entries|lists?|erinnerung\w*|aufgabe\w*|"
            r"eintr[aä]g\w*|liste\w*|punkt\w*|rappels?|t[aâ]ches?|"
            # es/it/pt/pl/nl (a helper's variants, 2026-12-06)
            r"recordatorios?|tareas?|pendientes?|promemoria|compit[oi]|attivit[aà]|lembretes?|tarefas?|"
            r"pend[eê]ncias?|przypomnie\w*|zada[nń]\w*|zadani\w*|herinnering\w*|taak|taken|lista\w*|listy|"
            r"list[eę]|lijst\w*|"
            # sv/da/nb, cs, tr (f10-p07/p10)
            r"uppgift\w*|opgave\w*|oppgave\w*|påminn\w*|påmind\w*|att-?göra\w*|gøremål\w*|gjøremål\w*|"
            r"huskelist\w*|úkol\w*|připom\w*|seznam\w*|položk\w*|görev\w*|hatırlat\w*|yapılacak\w*)\b"),
        (
            (_cue(_DELETE, _CANCEL, _MORE_DELETE, _MORE_CANCEL, r"clear|take\b.{0,40}\boff|streich\w*"),
             "agenda:remove"),
            (_cue(_DONE, _MORE_DONE), "agenda:complete"),
            (_cue(_RESCHEDULE, _MORE_RESCHEDULE, r"snooze|later"), "agenda:push"),
            (_cue(r"remind|erinner\w*"), "agenda:remind_at"),
            (_cue(r"show|list|read|zeig\w*", _MORE_READ), "agenda:list"),
        ),
        (
            (_cue(_DONE_PHRASAL, _MORE_DONE), "agenda:complete"),
            (_rx(_INSTEAD), "agenda:push"),
            (_cue(_TODO_QUESTION), "agenda:list"),
        ),
    ),
    _Pairing(
        Rule.MAIL_DIALOG_PAIRING, "mail",
        _rx(r"\b(?:e-?mails?|mails?|messages?|inbox|nachricht\w*|courriels?|"
            r"correos?|mensajes?|messaggi[oi]?|mensage[nm]s?|wiadomo[śs]\w*|mejl\w*|maile?|mailem|"
            r"e-?mailtjes?|mailtjes?|berichten|posta|"
            # sv/da/nb, cs, tr: "mejlet", "e-posten", "beskeden", "zprávu", "e-mailu", "e-postayı", "mesajı"
            r"e-?post\w*|meddelande\w*|melding\w*|besked\w*|e-?mail(?:et|en|ene|u|em|y|ů|i|ini|ler\w*)|"
            r"mail(?:et|en|ene|u|em|y|ů|i|ini|ler\w*)|zpráv\w*|mesaj\w*|ileti(?!şim)\w*)\b"),
        (
            (_cue(_DELETE, _MORE_DELETE), "mail:delete"),
            (_cue(r"archive|move|file|shove|stick|archivier\w*|verschieb\w*|schieb\w*|archiv\w*", _MORE_ARCHIVE,
                  r"mu[eé]v[ae]\w*|spost\w*|mov[ae](?:-[oa]s?)?|przenie[śs]\w*|verplaats\w*"), "mail:move"),
            (_cue(r"reply|answer|respond|forward|antwort\w*|beantwort\w*|weiterleit\w*", _MORE_REPLY), "mail:write"),
            (_cue(r"read|open|show|lies|zeig\w*|öffne", _MORE_READ, _SAYS, _MAIL_QUESTION, _ABOUT), "mail:read"),
        ),
        (
            (_cue(_REPLY_SAYING), "mail:write"),
        ),
    ),
    _Pairing(
        Rule.CALENDAR_DIALOG_PAIRING, "calendar",
        _rx(r"\b(?:meetings?|appointments?|events?|calendar|termin\w*|besprechung\w*|kalender\w*|r[ée]unions?|"
            r"rendez-vous|rdv|[ée]v[ée]nements?|[ée]v[èe]nements?|calendrier|"
            # es/it/pt/pl/nl, and kinds of meeting ("push the standup back half an hour" after
            # calendar:list; a helper's variants, 2026-12-06)
            r"reuni[oó]n(?:es)?|reuni[aã]o|reuni[õo]es|riunion[ei]|citas?|eventos?|eventi|calendario|"
            r"calend[aá]rio|appuntament[oi]|incontr[oi]|compromissos?|spotkani\w*|spotka[ńn]|wydarze[ńn]|"
            r"wydarzeni\w*|kalendarz\w*|vergadering\w*|afspra(?:ak|ken)|evenement\w*|"
            r"stand-?ups?|one-on-ones?|1:1s?|interviews?|webinars?|workshops?|"
            # sv/da/nb, cs, tr: "mötet", "mødet", "møtet", "schůzku", "toplantıyı" (f10-p13/p14)
            r"möte\w*|møde\w*|møte\w*|händelse\w*|begivenhed\w*|hendelse\w*|aftale\w*|avtale\w*|"
            r"schůz\w*|událost\w*|kalendář\w*|termín\w*|toplantı\w*|randevu\w*|etkinli\w*|takvim\w*)\b"),
        (
            (_cue(_DELETE, _CANCEL, _MORE_DELETE, _MORE_CANCEL, r"sag\w*\b.*\bab"), "calendar:delete"),
            (_cue(_RESCHEDULE, _ATTEND, _MORE_RESCHEDULE, _MORE_CHANGE, r"change|update|rename|retitle|edit|modify|"
                  r"änder\w*|umbenenn\w*|benenn\w*|modifi\w*|renomm\w*"), "calendar:update"),
            (_cue(r"show|details?|open|tell\s+me\s+(?:more\s+)?about|more\s+about|zeig\w*", _MORE_READ, _SAYS,
                  _EVENT_QUESTION, _ABOUT), "calendar:get"),
        ),
        (
            (_cue(_ATTEND_BOUND), "calendar:update"),
            (_rx(_INSTEAD), "calendar:update"),
            (_cue(_EVENT_QUESTION), "calendar:get"),
        ),
    ),
    _Pairing(
        Rule.DOC_DIALOG_PAIRING, "doc",
        _rx(r"\b(?:documents?|docs?|pdfs?|dokument\w*|documentos?|documenti|documenten|archivos?|ficheros?|"
            r"plik\w*|bestand(?:en)?|"
            # sv/da/nb "filen", cs "soubor", tr "belge", "dosya", "doküman"
            r"fil(?:en|er|erna|ene)|soubor\w*|belge\w*|dosya\w*|doküman\w*)\b"),
        (
            (_cue(_DELETE, _MORE_DELETE), "doc:delete"),
            (_cue(r"read|open|show|lies|zeig\w*", _MORE_READ), "doc:read"),
            # a question about what it says ("what does the second one say about pricing")
            (_cue(r"summari[sz]e|ask|query|search|question", _SAYS, _ABOUT), "doc:query"),
        ),
    ),
)
_ANAPHOR_RE = _rx(_ANAPHOR + "|" + _MORE_ANAPHOR)
#: Things of no pairing domain: "move that alarm to 7" after calendar:create is no calendar request;
#: in es/it/pt/pl/nl too ("borra la alarma de las 7", "apaga la luz": a helper's variants, 2026-12-06).
_ELSEWHERE_RE = _rx(r"\b(?:alarms?|timers?|weather|forecast|songs?|music|playlist|volume|news|wecker\w*|wetter|"
                    r"m[ée]t[ée]o|alarmes?|alarmas?|allarm[ei]|svegli[ae]|despertador\w*|budzik\w*|wekkers?|"
                    r"temporizador\w*|minutnik\w*|clima|pogod\w*|weerbericht\w*|m[úu]sica|muzyk\w*|muziek|"
                    r"canci[oó]n\w*|canzon[ei]|can[cç][aã]o|can[cç][õo]es|piosenk\w*|liedjes?|noticias|notizie|"
                    r"not[ií]cias|nieuws|volumen|g[łl]o[śs]no[śs][ćc]\w*|luz|luces|luc[ei]|"
                    # sv/da/nb, cs, tr ("slet alarmen", "přesuň budík", "alarmı ertele": 2026-12-06)
                    r"larm(?:et|en)?|alarm(?:en|et|ı|ım|ımı|lar\w*)|väckarklock\w*|vækkeur\w*|vekkerklokk\w*|"
                    r"budík\w*|minutk\w*|zamanlayıcı\w*|v[äæ]dret|vejret|været|počasí|hava\s+durumu\w*|"
                    r"musik\w*|hudb\w*|písn\w*|müzi\w*|şarkı\w*|nyhet\w*|nyheder\w*|haberler\w*|"
                    r"ljus(?:et)?|lys(?:et)?|světl\w*|ışı\w*)\b")
#: Nouns every list shares, and "agenda" (a meeting's, or a calendar in French): they name no other
#: domain's thing ("delete the first item" after mail:check, "what does the 2pm one say about the agenda").
_GENERIC_NOUNS = frozenset({"item", "items", "entry", "entries", "list", "lists", "liste", "listen", "agenda",
                            "lista", "listas", "listy", "listę", "lijst", "lijsten",
                            # sv/da/nb, cs, tr
                            "listan", "listorna", "listene", "seznam", "seznamu", "položka", "položku", "položky",
                            "listede", "listeden", "listeyi"})


#: Every pattern the pairing reads a follow-up by: its anaphors, and each pairing's nouns, verbs and cues.
_PAIRING_PATTERNS = (_ANAPHOR_RE, *(p for pairing in PAIRINGS
                                   for p in (pairing.nouns, *(q for q, _ in pairing.verbs + pairing.bound))))


def pairing_spelling(text: str) -> str:
    """``text`` with its misspelt words fixed to the pairing's own words (:func:`_pairing_spelling`),
    for a message in English: the router fixes words to the catalogue's only. A word the pairing
    already reads is left as written: "reporte-la" is French (``report\w*``), not "report"."""
    if foreign_by_function_words(text) or foreign_by_letters(text):
        return text
    known = known_words()
    fixes = {written: fix for written, fix in spelling_fixes(text, _pairing_spelling(), known.__contains__).items()
             if not any(p.search(written) for p in _PAIRING_PATTERNS)}
    # English apart from its typos: most of its other words are known ("poista tämä muistutus" is
    # Finnish, and "poista" no typo of "posta")
    fixed = {written.lower() for written in fixes}
    others = [w for w in re.findall(r"\b[^\W\d_]{2,}\b", text.lower()) if w not in fixed]
    if not fixes or sum(w in known or w in _FILLERS for w in others) < 0.75 * len(others):
        return text
    return apply_spelling(text, fixes)


@functools.lru_cache(maxsize=1)
def _pairing_spelling() -> SpellingIndex:
    """The pairing's own words (the verbs, nouns and cues of :data:`PAIRINGS`, :data:`_ANAPHOR`,
    :data:`~eris_lab.lexicon.ACTION_WORDS`) as a spelling index: a follow-up's mistyped verb is fixed
    to them whatever the catalogue says. The router fixes words to the catalogue's own, so "could u
    pls remvoe the 3rd" after a listing read no verb beside tools named ``delete_*`` (round
    seventeen's variants, 2026-12-07)."""
    # whole words of four letters or more; a stem spelt with a character class is no word ("canc[eé]l")
    words = {w for p in _PAIRING_PATTERNS
             for w in re.findall(r"[a-zà-ÿ]{4,}", re.sub(r"[a-zà-ÿ]*\[[^]]*\][a-zà-ÿ]*", " ", p.pattern.lower()))}
    return SpellingIndex(words=words | {w for verbs in ACTION_WORDS.values() for w in verbs})


def _dialog_pairing(text: str, catalog: Catalog, recent: Sequence[str], *,
                    confident: Iterable[str] = ()) -> Decision | None:
    """A continuation cue: an anaphor, a domain noun and a verb, that domain among the recent tools;
    right after a listing of that domain, a noun and a verb without an anaphor ("please remove
    the dentist reminder from my agenda" after ``agenda:list``: the item is one just listed);
    then :func:`_pairing_on_last`, which reads ``confident`` (tools whose hit clears the
    single-hit floor)."""
    if not recent:
        return None
    anaphor = bool(_ANAPHOR_RE.search(text))
    listed = domain_of(recent[-1]) if _is_listing(recent[-1]) else None
    if anaphor or listed is not None:
        recent_domains = {domain_of(name) for name in recent} if anaphor else {listed}
        for pairing in PAIRINGS:
            cluster = catalog.cluster(pairing.domain)
            if not cluster or pairing.domain not in recent_domains:
                continue
            noun = pairing.nouns.search(text)
            if not noun:
                continue
            verb_tool = pairing.verb_tool(text)
            if not verb_tool:
                continue
            first = (verb_tool,) if verb_tool in cluster else ()
            names = first + tuple(n for n in cluster if n not in first)
            last = next(n for n in reversed(recent) if domain_of(n) == pairing.domain)
            return Decision(
                rule=pairing.rule, kind="cluster", names=names,
                reason=f"continuation cue ({noun.group(0)!r}) after {last}: offering {pairing.domain} verbs, "
                       f"{names[0]} first",
            )
    return _pairing_on_last(text, catalog, recent, anaphor=anaphor, confident=confident)


#: Longest message (words) in a language the lab does not read that :func:`_pairing_on_last` reads
#: as being about what was just listed or made.
UNREAD_FOLLOW_UP_MAX_WORDS = 8


def _is_listing(name: str) -> bool:
    """Whether a tool only reads (a word of its name is in :data:`~eris_lab.lexicon.READ_VERBS`):
    right after it, "the first one" or "the dentist reminder" is one of what it listed."""
    return bool(set(name_words(base_name(name))) & READ_VERBS)


#: Verbs of a tool name that make or change an item that stays ("calendar:create",
#: "agenda:remind_at", "doc:ingest", "calendar:update"): right after one, "it" is that item
#: ("actually make it 8 instead", "cancel that"; a tester's variants, 2026-12-05, found the pairing
#: only after listings). A delete leaves no item: "remove it" after ``mail:delete`` never pairs.
_MAKING_VERBS = frozenset({"create", "add", "new", "make", "remind", "schedule", "book", "ingest", "update",
                           "edit", "push", "move", "reschedule", "rename"})


def _makes_item(name: str) -> bool:
    """Whether a tool makes or changes an item that stays (a word of its name is in :data:`_MAKING_VERBS`)."""
    return bool(set(name_words(base_name(name))) & _MAKING_VERBS)


#: Longest message (words) that an anaphor and a verb pair with the last tool's domain without a
#: domain noun: "reply to it and say yes, Thursday works for me" after ``mail:read`` is ten (six
#: until 2026-12-03 left eleven of a helper's follow-ups on the whole roster).
PAIRING_MAX_WORDS = 10
_ONE_RE = _rx(r"\b(?:" + _ONE + "|" + _AT_TIME + r")\b")
#: Words around a bare command that leave its object implied ("abhaken bitte", "ok delete").
_FILLERS = frozenset({"please", "pls", "plz", "ok", "okay", "now", "then", "yes", "yeah", "yep", "sure", "just",
                      "and", "so", "go", "ahead", "thanks", "thank", "you", "bitte", "jetzt", "dann", "ja", "doch",
                      "mal", "gleich", "danke", "oui", "alors", "maintenant", "stp", "svp", "merci",
                      # es/it/pt/pl/nl (a helper's variants, 2026-12-06)
                      "por", "favor", "porfa", "sí", "si", "vale", "ahora", "pues", "per", "favore", "piacere", "ora",
                      "adesso", "grazie", "sim", "agora", "obrigado", "obrigada", "proszę", "prosze", "tak",
                      "teraz", "dzięki", "nu", "dan", "graag", "alsjeblieft", "aub", "dank", "je", "wel",
                      # sv/da/nb, cs, tr
                      "tack", "snälla", "då", "okej", "gärna", "tak", "venligst", "så", "takk", "nå", "da",
                      "prosím", "díky", "teď", "ano", "hned", "lütfen", "teşekkürler", "sağol", "şimdi", "evet",
                      "tamam", "hemen"})
#: Bare words that also close a conversation ("done", "later", "cancel"): a command only with an object.
_CHAT_VERBS = frozenset({"done", "finished", "later", "cancel", "annule", "annuler", "erledigt", "complete",
                         "cancela", "cancelar", "annulla", "anuluj", "annuleer", "completa", "termina",
                         # sv/da/nb "avbryt" (abort), cs "zruš", tr "iptal (et)", "tamamlandı"
                         "avbryt", "afbryd", "annuller", "zruš", "zrušit", "zrušte", "iptal", "iptal et",
                         "iptal edin", "tamamla", "tamamlandı", "dokonči"})


def _implied_object_tool(pairing: _Pairing, text: str) -> str:
    """The tool of a cue that needs no anaphor: a bound cue ("who else is coming?"), or a bare
    command whose other words are fillers ("abhaken", "delete please"), else ``""``."""
    bound = next((tool for pattern, tool in pairing.bound if pattern.search(text)), "")
    if bound:
        return bound
    for pattern, tool in pairing.verbs:
        match = pattern.search(text)
        if match:
            rest = re.findall(r"[\w'’]+", f"{text[:match.start()]} {text[match.end():]}".lower())
            bare = match.group(0).lower() not in _CHAT_VERBS and all(w in _FILLERS for w in rest)
            return tool if bare else ""
    return ""


def _definite_object_tool(pairing: _Pairing, text: str, catalog: Catalog) -> str:
    """The tool of the first verb cue (in priority order) that acts on an item and has a definite
    object (:func:`_definite_object`: "push the standup back half an hour", "mueve el standup a las
    11", "verplaats de standup", "flytta tandläkaren till fredag", "dişçiyi ertele"), else ``""``:
    right after a listing the named thing is one it listed, as "the second one" is (a helper's
    variants, 2026-12-06).

    Not a verb of a reading tool ("search the web", "show the route" name no listed item), and not
    when the object's first two words hold a keyword of another domain's tool
    (:func:`_domain_keywords`: "cancel the train" beside a transit tool)."""
    for pattern, tool in pairing.verbs:
        if _is_listing(tool):
            continue
        for match in pattern.finditer(text):
            object_words = _definite_object(text, match)
            if object_words is None:
                continue
            named = {singular(w) for w in object_words[:2]}
            keywords = catalog.derived("policy.domain_keywords", _domain_keywords)
            others = set().union(*(words for domain, words in keywords.items() if domain != pairing.domain))
            return "" if named & (others - keywords.get(pairing.domain, frozenset())) else tool
    return ""


def _definite_object(text: str, verb: re.Match[str]) -> list[str] | None:
    """The words (lower-case, articles left out) of the definite object of the verb cue ``verb``,
    or None when it has none: a Turkish verb's accusative object before it
    (:data:`_ACCUSATIVE_OBJECT_RE`), a Swedish, Danish or Norwegian verb's noun with a definite
    ending after its first word or after the whole cue ("ta bort mötet"; :data:`_SUFFIX_DEFINITE_OBJECT_RE`),
    else a definite article after the verb's first word (:data:`_DEFINITE_OBJECT_RE`; a phrasal
    verb's object comes between its words: "push the standup back"). Czech has no article: its
    demonstrative beside the verb ("zruš tu schůzku") is an anaphor (:data:`_MORE_ANAPHOR`)."""
    cue = verb.group(0)
    if _TURKISH_VERB_RE.fullmatch(cue):
        found = _ACCUSATIVE_OBJECT_RE.search(text, 0, verb.start())
        return [w.lower() for w in re.findall(r"[^\W\d_]+", found.group(1))] if found else None
    first_word_end = verb.start() + len(re.match(r"\w*", cue).group(0))
    if _NORDIC_VERB_RE.fullmatch(cue):
        starts, object_re = (first_word_end, verb.end()), _SUFFIX_DEFINITE_OBJECT_RE
    else:
        # a phrasal verb's object comes between its words ("push the standup back"), a fixed
        # phrase's after them ("get rid of the duplicate" after doc:list: round twelve's variants)
        starts, object_re = (first_word_end, verb.end()), _DEFINITE_OBJECT_RE
    found = next(filter(None, (object_re.match(text, start) for start in starts)), None)
    if not found:
        return None
    after = [w.lower() for w in re.findall(r"[^\W\d_]+", text[found.start():])]
    return [w for w in after if w not in _ARTICLE_WORDS]


def _domain_keywords(catalog: Catalog) -> dict[str, frozenset[str]]:
    """Per domain, the words that name its tools' things: the domain, name words of four letters or
    more and declared ``keywords`` (as ``guard.tool_keywords``), singular and lower-case."""
    out: dict[str, set[str]] = {}
    for tool in catalog:
        words = out.setdefault(domain_of(tool.name), set())
        words.update(singular(w) for w in (domain_of(tool.name).lower(), *name_words(base_name(tool.name)),
                                           *(k.strip().lower() for k in tool.keywords)) if len(w) >= 4)
    return {domain: frozenset(words) for domain, words in out.items()}


def _names_another_thing(text: str, pairing: _Pairing) -> bool:
    """Whether ``text`` names a thing of another domain and none of ``pairing``'s ("delete that
    email" right after ``calendar:create``)."""
    if pairing.nouns.search(text):
        return False
    others = (m.group(0).lower() for p in PAIRINGS if p is not pairing for m in p.nouns.finditer(text))
    return any(word not in _GENERIC_NOUNS for word in others) or bool(_ELSEWHERE_RE.search(text))


#: An item named with no verb of its own, after a tool of its domain ("oh and the one from
#: Lufthansa as well" after ``mail:read``, "and the second one too"): the same again on that item,
#: the last tool first (round fifteen's variants, 2026-12-07: the whole roster was offered).
_SAME_AGAIN_RE = _rx(r"^\W*(?:(?:oh|and|also|now|ok|okay|then|what\s+about|how\s+about|same\s+(?:for|with))\W+)*"
                     r"(?:the|that|this)\s+(?:[\w'’-]+\s+)?one\b(?:\s+(?:from|about|with|for|at|on|by|in)\s+"
                     r"[^,.;!?]{1,40}?)?(?:\s+(?:too|as\s+well|also))?\W*$")


def _pairing_on_last(text: str, catalog: Catalog, recent: Sequence[str], *, anaphor: bool = True,
                     confident: Iterable[str] = ()) -> Decision | None:
    """A cue without a domain noun ("please remove it") acts on the last tool's domain.

    Right after a listing (the last recent tool's name holds a read verb,
    :data:`~eris_lab.lexicon.READ_VERBS`) or a tool that made or changed an item
    (:func:`_makes_item`), "it" is that item, and after any tool of the domain "that one" (or "the
    3pm") is what it made or showed: that domain's cluster is offered, the cue's verb first, for a
    message of at most :data:`PAIRING_MAX_WORDS` words that names no other domain's thing. Without
    an anaphor (``anaphor`` false), only right after a listing or a making, a bound cue ("who else
    is coming?") or a bare command ("abhaken") pairs, and right after a listing a verb whose object
    is definite ("push the standup back", "flytta tandläkaren", "dişçiyi ertele";
    :func:`_definite_object_tool`). A cluster, never one tool: a lone destructive verb widens and never locks the grammar onto it (issue 16).

    Right after a listing or a making, a message of at most :data:`UNREAD_FOLLOW_UP_MAX_WORDS`
    words in a language the lab does not read (``guard.unread_language``), whose verb no cue can
    read, is about that item too. The cues read English, German and the languages glossed so far;
    "peru se palaveri" (Finnish, "cancel that meeting") after ``calendar:list`` was conversation,
    "hapus email yang kedua" (Indonesian) after ``mail:check`` the whole roster (a helper's
    variants of the pairing cases, 2026-12-06). The domain's tools are offered, those that only
    read last (listing again is the least likely request); the model may still answer without a
    call. Not for a bare word that also closes a conversation (:data:`_CHAT_VERBS`: "iptal et", as
    a bare "cancel"), nor when a ``confident`` tool is of another domain.
    """
    last = recent[-1]
    pairing = next((p for p in PAIRINGS if p.domain == domain_of(last)), None)
    cluster = catalog.cluster(pairing.domain) if pairing else ()
    if not cluster or word_count(text) > PAIRING_MAX_WORDS or _names_another_thing(text, pairing):
        return None
    points_back = _is_listing(last) or _makes_item(last)
    if anaphor and not points_back and not _ONE_RE.search(text):
        return None  # "it" after a delete may be anything; "that one" is the item just made
    if not anaphor and not points_back:
        return None
    if anaphor:
        verb_tool = pairing.verb_tool(text)
    else:  # a definite object points back only right after a listing, and says more than a bound
        # cue that only names a thing ("get rid of the invite from Tom" is no invitation: round
        # thirteen's variants, 2026-12-06)
        verb_tool = (_definite_object_tool(pairing, text, catalog) if _is_listing(last) else "") or (
            _implied_object_tool(pairing, text))
    if not verb_tool and anaphor and _is_listing(last) and _asks_about_item(text, pairing, confident):
        verb_tool = next((tool for _, tool in pairing.verbs if _is_listing(tool)), "")
    if not verb_tool and _SAME_AGAIN_RE.match(text) and last in cluster:
        verb_tool = last  # "oh and the one from Lufthansa as well" right after mail:read: read it too
    if not verb_tool:
        return _unread_on_last(text, pairing, tuple(cluster), last, confident) if points_back else None
    first = (verb_tool,) if verb_tool in cluster else ()
    names = first + tuple(n for n in cluster if n not in first)
    return Decision(rule=pairing.rule, kind="cluster", names=names,
                    reason=f"continuation cue right after {recent[-1]}: offering {pairing.domain} verbs, {names[0]} first")


def _asks_about_item(text: str, pairing: _Pairing, confident: Iterable[str]) -> bool:
    """Whether ``text`` is a question about an item just listed, one no cue reads ("who's organising
    that one?", "when did she send it?", "does it have an attachment?", "who wrote the second
    one?" right after a listing: round twelve's variants, 2026-12-06). Such a question is answered
    by the tool that reads one item (the pairing's first reading verb: ``calendar:get``,
    ``mail:read``, ``doc:read``). The caller has found an anaphor; the message opens with a
    question word (:data:`~eris_lab.lexicon.QUESTION_WORDS`) or ends with "?", its "it" is no
    impersonal one (:data:`IMPERSONAL_IT_RE`), and no ``confident`` tool is of another domain.
    """
    words = re.findall(r"[\w'’]+", text.lower())
    question = bool(words) and (words[0] in QUESTION_WORDS or text.rstrip().endswith("?"))
    return question and not IMPERSONAL_IT_RE.search(text) and not _confident_elsewhere(pairing, confident)


def _confident_elsewhere(pairing: _Pairing, confident: Iterable[str]) -> bool:
    """Whether a ``confident`` tool (its hit clears the single-hit floor) is outside ``pairing``'s
    domain: then a follow-up read only by :func:`_pairing_on_last`'s fallbacks is about that tool."""
    return any(domain_of(name) != pairing.domain for name in confident)


def _unread_on_last(text: str, pairing: _Pairing, cluster: tuple[str, ...], last: str,
                    confident: Iterable[str]) -> Decision | None:
    """The unread follow-up of :func:`_pairing_on_last`: ``pairing``'s cluster, reading tools last,
    or None."""
    words = [w.lower() for w in re.findall(r"[^\W\d_]+", text)]
    if (word_count(text) > UNREAD_FOLLOW_UP_MAX_WORDS or not unread_language(text)
            or " ".join(words) in _CHAT_VERBS or all(w in _CHAT_VERBS or w in _FILLERS for w in words)
            or _confident_elsewhere(pairing, confident)):
        return None
    names = tuple(n for n in cluster if not _is_listing(n)) + tuple(n for n in cluster if _is_listing(n))
    return Decision(rule=pairing.rule, kind="cluster", names=names,
                    reason=f"a short follow-up right after {last} in a language the lab does not read: "
                           f"offering the {pairing.domain} tools, the reading ones last")


def with_intents(decision: Decision, intents: Sequence[Hit], catalog: Catalog, knobs: Knobs) -> Decision:
    """Add the best tool of each request of a message that joins several, beside ``decision``.

    Parameters
    ----------
    decision : Decision
    intents : sequence of Hit
        Each clause's best tool and its score, with same-domain siblings within ``margin`` of it
        (``Router.last_intents``; ``guard.clauses`` splits).
    catalog : Catalog
    knobs : Knobs
        Only calibrated knobs (``subset_margin`` below 2) add intents; DESIGN.md's reference rules
        stay as they are. A clause's best tool counts from ``threshold`` on.

    Returns
    -------
    Decision
        Unchanged for a full roster, nothing to offer, or no missing intent; else the same rule
        and kind with the missing tools appended, the reason saying so.

    Notes
    -----
    Issue 18 item 8 and bad input row 30: one message with six requests was locked onto three
    tools of one domain; per-clause scores alone are drowned when the policy keeps hits near the
    overall top only. Under the reference knobs a clause that is no request ("they're going to
    ruin my weekend with this rain, what's it doing tomorrow?", case route-01) would add its tool.
    """
    if decision.kind in ("full_roster", "conversational") or len(intents) < 2 or knobs.subset_margin >= 2.0:
        return decision
    extra = tuple(dict.fromkeys(h.name for h in intents if h.name in catalog and h.score >= knobs.threshold
                                and h.name not in decision.names))
    if not extra:
        return decision
    return Decision(rule=decision.rule, kind=decision.kind, names=decision.names + extra,
                    reason=f"{decision.reason}; plus the best tools of each further request: {', '.join(extra)}")


#: Most tools dialog memory adds to one offer.
MEMORY_MAX = 2


def _family(catalog: Catalog, name: str) -> str:
    """A tool's family (``catalog.family_of``: its domain, else its description's first sentence)."""
    return family_of(catalog.tool(name))


#: A message that only asks to repeat the last turn ("do that again", "same again", "once more
#: please", "nochmal"): the previous turn's tools come first, whatever their family (demo hist-013).
REPEAT_RE = re.compile(
    r"(?i)^\W*(?:(?:ok(?:ay)?|and|now|please|pls)\W+)*(?:(?:do|run|try)\s+(?:that|it|this)(?:\s+one)?\s+"
    r"(?:again|once\s+more|one\s+more\s+time)|(?:the\s+)?same\s+again|again|once\s+more|one\s+more\s+time|"
    r"repeat\s+(?:that|it|this)|(?:noch\s*(?:ein)?mal|nochmals)(?:\s+bitte)?|mach\s+(?:das|es)\s+(?:noch\s*(?:ein)?mal|nochmals)"
    r"|wiederhol\w*\s+(?:das|es))(?:\W+(?:please|bitte))?\W*$")


def with_memory(decision: Decision, last_turn: Sequence[str], ranked: Sequence[Hit], catalog: Catalog,
                knobs: Knobs, *, points_back: bool = False, repeat: bool = False) -> Decision:
    """Keep tools that ran on the previous turn in the offer, when this message continues that work.

    Parameters
    ----------
    decision : Decision
    last_turn : sequence of str
        Tools that ran since the previous user message, in call order (names outside ``catalog``
        are ignored).
    ranked : sequence of Hit
        This message's score for every tool (``Router.last_ranked``), best first.
    catalog : Catalog
    knobs : Knobs
        Only calibrated knobs (``subset_margin`` below 2) use memory, as :func:`with_intents`;
        reads ``threshold``.
    points_back : bool
        The message points back at the last turn ("it", "that file", "the same"): then a
        remembered tool of the same family as the offer's first tool is kept whatever it scores.
    repeat : bool
        The message only asks to repeat the last turn (:data:`REPEAT_RE`): the last turn's tools
        (at most :data:`MEMORY_MAX`) come first, of any family.

    Returns
    -------
    Decision
        Unchanged for a full roster, nothing to offer, or nothing to keep; else at most
        :data:`MEMORY_MAX` remembered tools appended, each recorded in ``sources`` as ``memory``.

    Notes
    -----
    A remembered tool is kept only when it belongs to the family of the tool the policy put first
    (its domain, else the shared first sentence of BFCL's class descriptions) and either scores at
    or above ``threshold`` for this message, or the message points back. A turn on another API
    never drags the last turn's tools along (issue 15: prepending the previous turn to the message
    lowered BFCL multi-turn top-5 recall from 0.721 to 0.621).
    """
    if decision.kind in ("full_roster", "conversational") or not decision.names or knobs.subset_margin >= 2.0:
        return decision
    if repeat:
        again = tuple(dict.fromkeys(n for n in reversed(tuple(last_turn)) if n in catalog))[:MEMORY_MAX]
        if again:
            return Decision(rule=decision.rule, kind=decision.kind,
                            names=again + tuple(n for n in decision.names if n not in again),
                            reason=f"{decision.reason}; a repeat of the last turn: {', '.join(again)} first",
                            sources=decision.sources + tuple((n, "memory") for n in again))
    family = _family(catalog, decision.names[0])
    score = {h.name: h.score for h in ranked}
    keep = []
    for name in dict.fromkeys(reversed(tuple(last_turn))):  # the latest call first
        if name not in catalog or name in decision.names or _family(catalog, name) != family:
            continue
        if points_back or score.get(name, -1.0) >= knobs.threshold:
            keep.append(name)
        if len(keep) >= MEMORY_MAX:
            break
    if not keep:
        return decision
    return Decision(rule=decision.rule, kind=decision.kind, names=decision.names + tuple(keep),
                    reason=f"{decision.reason}; memory: {', '.join(keep)} ran on the previous turn",
                    sources=decision.sources + tuple((n, "memory") for n in keep))


#: Rules whose tools come from the conversation, not from this message's words: a dialog pairing
#: acts on what the last tool returned ("delete that email"), a failed or added tool waits for the
#: reply, and a forced hit read the value it needs (the URL) off the message. :func:`with_slots`
#: leaves them alone.
_SLOTS_EXEMPT = frozenset({
    Rule.AGENDA_DIALOG_PAIRING, Rule.MAIL_DIALOG_PAIRING, Rule.CALENDAR_DIALOG_PAIRING, Rule.DOC_DIALOG_PAIRING,
    Rule.FAILED_TOOL_RETRY, Rule.TOOLS_ADDED, Rule.LEXICAL_FORCED_ONLY, Rule.MIXED_EMBED_AND_LEXICAL,
})


def with_slots(decision: Decision, catalog: Catalog, knobs: Knobs, text: str, *, after_tools: bool = False) -> Decision:
    """Offer only tools whose required arguments ``text`` can fill (:mod:`eris_lab.slots`).

    Parameters
    ----------
    decision : Decision
    catalog : Catalog
    knobs : Knobs
        Reads ``slot_check``: ``off`` (the reference), ``gate`` (nothing is offered when no chosen
        tool can be filled) or ``prune`` (a subset or cluster also loses the tools it cannot fill).
    text : str
        Where values may come from: the message, and the previous user message of a follow-up.
    after_tools : bool
        Tools already ran in this conversation (dialog memory is not empty): their results are
        in the model's context and may hold any value ("What about the standard deviation?" of
        numbers a file read returned, BFCL ``multi_turn_base``), so nothing is checked.

    Returns
    -------
    Decision
        Unchanged when the check is off or ``after_tools``, for nothing to offer, for
        :data:`_SLOTS_EXEMPT` rules, or when one chosen tool can be filled (``gate``);
        ``MISSING_ARGUMENTS`` (nothing offered, the reason naming what the best tool lacks) when
        none can; with ``prune``, the fillable tools alone under the same rule, the reason naming
        those dropped. A full roster is never pruned.

    Notes
    -----
    The grammar makes the model write every required argument (``grammar.compile``), so a tool
    offered without its values makes the model invent them. BFCL counts a call in that situation
    as a failure of relevance detection (its ``irrelevance`` and ``live_irrelevance`` categories).
    Measured with the calibrated knobs (docs/calibrated-offers.md): empty offers on irrelevance
    0.167 -> 0.446 and live_irrelevance 0.363 -> 0.619, live_multiple recall 0.984 -> 0.981.
    """
    if (knobs.slot_check == "off" or after_tools or decision.kind == "conversational" or not decision.names
            or decision.rule in _SLOTS_EXEMPT):
        return decision
    slots = catalog.derived("policy.required_slots", lambda _: {})  # tool -> its slots, filled as tools come up
    evidence: dict[str, bool] = {}  # kind -> found in the text, each kind tested once

    def found(kind: str) -> bool:
        if kind not in evidence:
            evidence[kind] = has_evidence(kind, text)
        return evidence[kind]

    keep: list[str] = []
    first_missing: tuple[str, tuple[MissingSlot, ...]] | None = None
    for name in decision.names:
        if name not in catalog:
            continue
        if name not in slots:
            slots[name] = required_slots(catalog.tool(name).parameters)
        missing = tuple(MissingSlot(arg, kind) for arg, kind in slots[name] if not found(kind))
        if not missing:
            keep.append(name)
            if knobs.slot_check == "gate" or decision.kind == "full_roster":
                return decision  # one tool can be called: the offer stands
        elif first_missing is None:
            first_missing = (name, missing)
    if first_missing is None:  # every chosen tool can be filled (prune), or none is in the catalogue
        return decision
    if not keep:
        name, missing = first_missing
        others = ", nor for the required arguments of the other chosen tools" if len(decision.names) > 1 else ""
        return Decision(rule=Rule.MISSING_ARGUMENTS, kind="conversational", names=(),
                        reason=f"{decision.reason}; but the message gives no value for {name}'s "
                               f"{', '.join(m.describe() for m in missing)}{others}: offering nothing, so the model asks",
                        missing=tuple((name, m.describe()) for m in missing))
    kept = set(keep)
    dropped = [n for n in decision.names if n not in kept]
    return Decision(rule=decision.rule, kind=decision.kind, names=tuple(keep),
                    reason=f"{decision.reason}; without {', '.join(dropped)} (required arguments the message "
                           "does not give)",
                    sources=tuple(s for s in decision.sources if s[0] in kept))


#: The most tools :func:`with_listing` seats: more sharing one noun is no family of one item's verbs.
LISTING_MAX = 8


def _best_scores(hits: Iterable[Hit]) -> dict[str, float]:
    """Each tool's best score among ``hits`` (a name may be scored by several readings)."""
    best: dict[str, float] = {}
    for hit in hits:
        best[hit.name] = max(hit.score, best.get(hit.name, -2.0))
    return best


def listed_siblings(name: str, catalog: Catalog) -> tuple[str, ...]:
    """The tools that act on what the listing tool ``name`` lists: every catalogue tool whose name
    holds the listing's head noun, singular or plural (``list_tickets`` -> ``create_ticket``,
    ``update_ticket``, ``list_tickets``). The head noun is the last word of the name that is no read
    verb, CRUD verb or function word, before any "by" or "for" (``get_orders_by_user`` -> order).
    Empty when the name holds no such noun, when only the listing itself holds it, or when more than
    :data:`LISTING_MAX` tools do (the noun names no one item's verbs)."""
    words = list(name_words(base_name(name)))
    for cut in ("by", "for", "from", "with"):
        if cut in words[1:]:
            words = words[:words.index(cut, 1)]
    verbs = READ_VERBS | frozenset().union(*ACTION_WORDS.values())
    nouns = [w for w in words if w not in verbs and w not in STOPWORDS and len(w) > 2]
    if not nouns:
        return ()
    head = singular(nouns[-1])
    siblings = tuple(t.name for t in catalog if head in {singular(w) for w in name_words(base_name(t.name))})
    return siblings if 2 <= len(siblings) <= LISTING_MAX else ()


def with_listing(decision: Decision, text: str, recent: Sequence[str], catalog: Catalog,
                 ranked: Sequence[Hit] = ()) -> Decision:
    """Seat the listed item's tools first for a short follow-up that points at one of what the last
    tool listed, on a catalogue without dialog pairings ("close the first one" right after
    ``list_tickets``; "ack the disk one" after ``list_alerts``).

    The demo catalogue's pairing rules know their domains' verbs (:data:`PAIRINGS`); a catalogue of
    plain names has no domains, and such a follow-up's cosines follow its verb alone ("close" led
    merge_pull_request, "ack" the tickets; round nineteen's variants on a devops catalogue, 2026-12-07).
    Applies when the last of ``recent`` only reads (:func:`_is_listing`), the message has at most
    eight words and an item reference (:data:`_ANAPHOR`), and the decision offers something without
    leading with one of the listed item's tools (:func:`listed_siblings`), or the relevance gate
    refused a command (:func:`_is_command`: "close the first one" alone scores like chit-chat). The
    item's tools go first, best ``ranked`` first, the reading ones last and the message's verb's tool ahead
    (:func:`action_order`), then the decision's own tools, the offer no longer than before (or than
    the item's tools); the rule is ``LISTING_FOLLOW_UP`` and ``sources`` says ``listing``.
    """
    refused = decision.rule == Rule.NO_TOOL_FITS and _is_command(text)
    if (not recent or decision.kind == "full_roster" or not (decision.names or refused)
            or recent[-1] not in catalog or not _is_listing(recent[-1]) or word_count(text) > 8
            or not _ANAPHOR_RE.search(text)):
        return decision
    siblings = listed_siblings(recent[-1], catalog)
    if not siblings or (decision.names and decision.names[0] in siblings):
        return decision
    scores = _best_scores(ranked)
    best = sorted(siblings, key=lambda n: (_is_listing(n), -scores.get(n, -2.0)))  # the reading tools last
    seated, _ = action_order(best, text, scores)
    names = tuple(dict.fromkeys((*seated, *decision.names)))[:max(len(decision.names), len(seated))]
    added = tuple((n, "listing") for n in seated if n not in decision.names)
    return Decision(rule=Rule.LISTING_FOLLOW_UP, kind="cluster", names=names,
                    reason=f"{', '.join(seated)} first: the message points at an item {recent[-1]} listed "
                           f"(before: {decision.reason})", sources=decision.sources + added)


def with_added(decision: Decision, added: Sequence[str], catalog: Catalog) -> Decision:
    """Offer tools the catalogue gained since the last user message first: the pending request waits for them.

    Parameters
    ----------
    decision : Decision
    added : sequence of str
        Tools listed since the last user message (``router.added_tools``); names outside
        ``catalog`` are ignored.
    catalog : Catalog

    Returns
    -------
    Decision
        Unchanged without added tools, for a full roster or a greeting (``CONVERSATIONAL``); a
        message the relevance gate refused becomes ``TOOLS_ADDED`` (the added tools alone);
        otherwise the added tools go first, each recorded in ``sources`` as ``added``.

    Notes
    -----
    Issue 15, ``multi_turn_miss_func``: BFCL withholds a function, then hands it back for the
    request still pending; re-scored like any tool, it was offered on 0.845 of those turns
    (docs/results/conversation-2026-11-30.json). A host announces new tools (MCP's
    ``notifications/tools/list_changed``) because something asked for them.
    """
    added = tuple(n for n in dict.fromkeys(added) if n in catalog)
    if not added or decision.kind == "full_roster" or decision.rule == Rule.CONVERSATIONAL:
        return decision
    if decision.kind == "conversational":
        return Decision(rule=Rule.TOOLS_ADDED, kind="subset", names=added,
                        reason=f"{decision.reason}; but {', '.join(added)} were just added for the pending request: "
                               "offering them", sources=tuple((n, "added") for n in added))
    rest = tuple(n for n in decision.names if n not in added)
    return Decision(rule=decision.rule, kind=decision.kind, names=added + rest,
                    reason=f"{decision.reason}; {', '.join(added)} just added to the catalogue: offered first",
                    sources=decision.sources + tuple((n, "added") for n in added if n not in decision.names))


#: A reply that only supplies a value: a fragment opening with a preposition or "I'm in", "it's",
#: "my address is" ("from 12 Baker Street" after a failed taxi order kept web_search, 0.58, beside
#: it: a helper's variant of route-23, 2026-12-06).
_SLOT_ANSWER_RE = re.compile(
    r"(?i)^\W*(?:(?:ok|okay|sorry|oh|yes|yeah|sure|right)\W+)*(?:from|to|at|in|on|for|near|around|by|until|till|"
    r"i'm in|im in|i am in|i'm at|i am at|it's|its|it is|that's|thats|my \w+(?: \w+)? is|the \w+(?: \w+)? is)\b[^?]*$")

#: A reply that is the value alone: up to four words, each a name or holding a digit ("Rotterdam",
#: "New York", "SW1A 1AA"), names joined by a particle ("Frankfurt am Main"). After a failed weather
#: call, "Rotterdam" with the question before it kept search_web beside the weather tool (round
#: twelve's variants of route-23, 2026-12-06).
_VALUE_WORD = r"(?:[^\W\d_]*[A-ZÀ-ÖØ-Þ][\w'’.-]*|[\w'’.:/-]*\d[\w'’.:/-]*)"  # a name, or a word with a digit
_BARE_VALUE_RE = re.compile(r"^\W*" + _VALUE_WORD + r"(?:\s+(?:(?:am|an|de|da|del|der|di|du|la|le|of|on|upon|van|von)\s+)?"
                            + _VALUE_WORD + r"){0,3}\W*$")

_POLITE_RE = re.compile(r"(?i)\b(?:please|pls|thanks|thank you|bitte|danke)\b")


#: "New" before a name ("New York", "New Delhi"): a place, though "new" opens requests ("new email").
_NEW_BEFORE_NAME_RE = re.compile(r"\bNew(?=\s+[A-Z])")


def _only_a_value(text: str) -> bool:
    """Whether a reply only supplies a value (:data:`_SLOT_ANSWER_RE`, :data:`_BARE_VALUE_RE`) and
    asks for nothing (``guard.asks_something``: "on second thought, play some music instead" after a
    preposition, a bare "Cancel", "Play Adele" in title case; round thirteen's guards, 2026-12-06).
    "New" before a name is part of it (:data:`_NEW_BEFORE_NAME_RE`)."""
    if _SLOT_ANSWER_RE.match(text):
        return not asks_something(_POLITE_RE.sub(" ", text))
    return bool(_BARE_VALUE_RE.match(text)) and not asks_something(_NEW_BEFORE_NAME_RE.sub(" ", text))


def retry_failed(decision: Decision, failed: Sequence[str], hits: Sequence[Hit], catalog: Catalog,
                 knobs: Knobs | None = None, text: str = "") -> Decision:
    """Offer recent tool calls that failed again, beside what ``decision`` offers.

    Parameters
    ----------
    decision : Decision
        What :func:`decide` made of the message.
    failed : sequence of str
        Tools whose last call failed (names outside ``catalog`` are ignored), e.g. a weather call
        without a location; the user's reply ("I'm in Leeds") may supply what it lacked.
    hits : sequence of Hit
        The hits ``decide`` saw, score descending; they follow the failed tools when the decision
        was unsure.
    catalog : Catalog
    knobs : Knobs, optional
        Given (as ``decide_turn`` does), an unsure decision's widening is set aside: the failed
        tools are followed only by hits at or above ``knobs.threshold``, at most ``knobs.widen_k``
        tools in all. Without it, the unsure decision's own ranked subset follows them.
    text : str, optional
        The message. A reply that only supplies a value (:data:`_SLOT_ANSWER_RE`: "from 12 Baker
        Street", "I'm in Leeds"; :data:`_BARE_VALUE_RE`: "Rotterdam") is offered the failed tools
        and its forced hits only, whatever else scored.

    Returns
    -------
    Decision
        Unchanged without failed tools or for a greeting (``CONVERSATIONAL``). An unsure, empty
        or full-roster decision becomes ``FAILED_TOOL_RETRY``: the failed tools first, then the
        hits that cleared the threshold (``knobs`` given), else the unsure decision's own ranked
        subset, or the hits after a full roster or an empty offer (none after the gate's
        ``NO_TOOL_FITS``); a confident one keeps its rule and gets the failed tools appended.

    Notes
    -----
    The fix reported with case route-23 (isair/jarvis PR #352: "when the previous tool reported
    failure, union it back into the allowed set"); carried over only on failure.
    """
    failed = tuple(n for n in dict.fromkeys(failed) if n in catalog)
    if not failed or decision.rule == Rule.CONVERSATIONAL:
        return decision
    if text and _only_a_value(text):
        # (a new request after a preposition is none: "on second thought, play some music instead")
        forced = tuple(h.name for h in hits if knobs is not None and h.score >= knobs.forced_floor
                       and h.name in catalog and h.name not in failed)
        return Decision(rule=Rule.FAILED_TOOL_RETRY, kind="subset", names=failed + tuple(dict.fromkeys(forced)),
                        reason=f"the last call of {', '.join(failed)} failed and the reply only supplies a value: "
                               f"offering it again ({decision.rule} set aside)")
    unsure = decision.kind in ("full_roster", "conversational") or decision.rule in (
        Rule.UNSURE_FULL_ROSTER, Rule.UNSURE_DOMAIN_CLUSTER, Rule.UNSURE_RANKED, Rule.EMPTY_AFTER_POLICY)
    if unsure:
        # after the relevance gate's "no tool fits" only the failed tools come back: the message is
        # a reply to their call, and the hits are what the gate just refused
        # a ranked widening keeps its bound (a helper's variant of route-23: "Lisbon" after a failed
        # clock:now was offered 51 of 56 tools, every hit over the calibrated threshold)
        if decision.rule == Rule.NO_TOOL_FITS:
            ranked: tuple[str, ...] = ()
        elif knobs is not None:
            # unsure means the message is most likely the answer the failed call lacked ("Ich bin in
            # München"): the widening's guesses (web_search, log_meal) were what route-23 warns of
            # (a helper's variants, 2026-12-05); only tools the message itself calls for follow
            ranked = tuple(h.name for h in hits if h.score >= knobs.threshold)
        else:
            ranked = decision.names if decision.kind == "subset" and decision.names else tuple(h.name for h in hits)
        names = failed + tuple(n for n in dict.fromkeys(ranked) if n in catalog and n not in failed)
        if knobs is not None:
            names = names[:max(knobs.widen_k, len(failed))]
        return Decision(rule=Rule.FAILED_TOOL_RETRY, kind="subset", names=names,
                        reason=f"the last call of {', '.join(failed)} failed; the reply may supply what it lacked: "
                               f"offering it again" + (f" ({decision.rule} set aside)" if decision.rule else ""))
    extra = tuple(n for n in failed if n not in decision.names)
    if not extra:
        return decision
    return Decision(rule=decision.rule, kind=decision.kind, names=decision.names + extra,
                    reason=f"{decision.reason}; failed {', '.join(extra)} offered again")


# ---------------------------------------------------------------------------------------------
# A message whose subject no tool covers
# ---------------------------------------------------------------------------------------------

_SUBJECT_WORD_RE = re.compile(r"[A-Za-z]{3,}")


#: Words that name no subject: the question words ("where", "when", "how") and vague nouns. A tool
#: whose text says "where the file is" or "a place" covered "where is a good place for sushi?" by
#: them (round sixteen's variants, 2026-12-07: offered a file finder and a map pin).
_NO_SUBJECT_WORDS = QUESTION_WORDS | frozenset(
    "place places thing things stuff something anything everything nothing someone anyone somebody anybody "
    "somewhere anywhere kind sort way".split())


def _subject_words(text: str) -> set[str]:
    """Content words of ``text`` (three letters or more; stop words, :data:`REQUEST_WORDS` and
    :data:`_NO_SUBJECT_WORDS` out), lower-cased, a plural ``s`` off, cut to six letters so
    "equations" meets "equation" and "triangular" meets "triangle"."""
    words = (w.lower() for w in _SUBJECT_WORD_RE.findall(text))
    return {singular(w)[:6] for w in words
            if w not in STOPWORDS and w not in REQUEST_WORDS and w not in _NO_SUBJECT_WORDS}


def _declared_keyword_re(catalog: Catalog) -> re.Pattern[str] | None:
    """One pattern for every tool's declared ``keywords`` (whole words, any case), or None."""
    words = sorted({k.strip().lower() for tool in catalog for k in tool.keywords if k.strip()}, key=len, reverse=True)
    if not words:
        return None
    return re.compile(r"(?i)(?<![\w-])(?:" + "|".join(re.escape(w) for w in words) + r")(?![\w-])")


def names_declared_keyword(text: str, catalog: Catalog) -> bool:
    """Whether ``text`` holds a word a descriptor declares as its tool's keyword (``keywords``).

    The relevance gate never refuses such a message: a keyword is the catalogue author's explicit
    routing word ("remember that my car is a blue Golf" for ``memory:stage``, demo plain-028;
    "make a note: the wifi password ..."), while the gate judges cosines it learned from
    pseudo-queries. A keyword of six letters or more is read through one typo ("remeber that i
    hate olives", demo typo-020). Name words do not count (measured: live_irrelevance 0.708 ->
    0.706 with them); BFCL's tools declare none, so its suites are unchanged."""
    pattern = catalog.derived("policy.declared_keyword_re", _declared_keyword_re)
    if pattern is None:
        return False
    if pattern.search(text) is not None:
        return True
    long_keywords = catalog.derived("policy.long_keywords", _long_keywords)
    return any(one_edit_apart(word, keyword) for word in {w.lower() for w in re.findall(r"[^\W\d_]{5,}", text)}
               for n in (len(word) - 1, len(word), len(word) + 1) for keyword in long_keywords.get(n, ()))


def _long_keywords(catalog: Catalog) -> dict[int, frozenset[str]]:
    """Declared one-word keywords of six letters or more, by length (typos are read for these)."""
    out: dict[int, set[str]] = {}
    for tool in catalog:
        for k in tool.keywords:
            k = k.strip().lower()
            if len(k) >= 6 and k.isalpha():
                out.setdefault(len(k), set()).add(k)
    return {n: frozenset(ws) for n, ws in out.items()}


def _tool_subject_words(catalog: Catalog) -> tuple[frozenset[str] | None, ...]:
    """Per tool, its :func:`_subject_words`; None for a tool whose subject is open (a web search).

    The open-subject words are whole words, as written or singular ("search engines"), or two or
    three words joined ("Duck Duck Go", live_multiple_30-10-0): cut to
    subject words, "news" was "new" and matched no tool's "news", while six-letter prefixes marked
    "international" and "engineer" open."""
    out = []
    for tool in catalog:
        text = lexical_text(tool)
        out.append(None if _names_a_word_of(text, OPEN_SUBJECT_WORDS) else frozenset(_subject_words(text)))
    return tuple(out)


#: A tool whose text holds fewer subject words than this (a one-line description and no
#: parameters: "Change code in a file.") says too little to tell what it does not cover, so beside
#: it a command ("hey, fix the login bug", route-14) is never judged uncovered; a question still is
#: ("hi, what's the capital of Peru?"). BFCL's tools hold more: 4 of the 1,621 distinct tools of
#: irrelevance, live_irrelevance and live_multiple hold fewer than 5, and moving the bound to 4..7
#: changed none of those suites' offers; the handed cases' tools hold a median of 4.
THIN_TOOL_WORDS = 5
#: Words that open a statement or a question, not a command: wh-words, pronouns, auxiliaries.
_NOT_A_COMMAND = STOPWORDS | ENGLISH_CUES | QUESTION_WORDS | frozenset(
    """i i'm im we we're they he she it's its there there's here was were don't may might must
    have has had am be been being if then so but just also maybe""".split())
#: A message about the user's own work or workspace ("where do we parse ...", "how does our build
#: ..."): beside a thin tool of that workspace it is not judged uncovered, as a command is not.
_OWN_WORK_RE = re.compile(r"(?i)\b(?:we|we're|we've|our|ours)\b")


def _is_command(text: str) -> bool:
    """Whether a sentence or clause of ``text`` (small talk in front left out,
    ``guard.without_small_talk``) opens, after a greeting and a "please" or "can you", with a word
    that is no wh-word, pronoun, auxiliary or function word: an imperative ("hey, fix the login
    bug", "could you refactor the payment module", "why is the login failing? fix it", "hello, the
    login is broken, please fix it"), not a question or a statement ("how are you?", "the build is
    red"). A word-list reading, no tagger: "time flies when ..." reads as a command too, which is
    why only :func:`uncovered`'s thin-tool exemption asks it."""
    for sentence in re.split(r"(?<=[.!?,;])\s+", (without_small_talk(text) or text).strip()):
        # any sentence or clause may be the command: "why is the login failing? fix it", "hello,
        # the login is broken, please fix it"
        rest = LEADING_FILLER_RE.sub("", sentence)
        match = re.match(r"[A-Za-z][A-Za-z']*", rest)
        if match and match.group(0).lower() not in _NOT_A_COMMAND:
            return True
    return False


def uncovered(text: str, names: Iterable[str], catalog: Catalog) -> bool:
    """True when ``text`` reads English and no content word of it is in the text of any of ``names``.

    The tools' text is ``catalog.lexical_text`` (name words, description, keywords, parameter
    descriptions and enum values); a tool whose text names the web, news or an encyclopedia
    (:data:`~eris_lab.lexicon.OPEN_SUBJECT_WORDS`) covers every subject, and one that names goods
    covers a question about selling, buying or prices (:data:`~eris_lab.lexicon.GOODS_TOOL_RE`). A message in another
    language or mostly in another script (``guard.unread_script``: a lone "π" in an English
    question does not count) never counts, nor one without a content word or without an English
    function word ("Triangle area, base 4" is left to the other rules).

    Notes
    -----
    Issue 18 item 4: a message that "names an object the tool's description does not cover"
    ("Calculate the area of a triangle" beside ``determine_body_mass_index``). With a low top
    cosine it is the relevance rule :data:`~eris_lab.knobs.Knobs` ``uncovered_floor`` (measured in
    ``calibration.UNCOVERED_FLOOR``'s notes).
    """
    names = list(names)
    words = _subject_words(text)
    if not words or mostly_german(text) or unread_script(text):
        return False
    if not any(w.lower() in ENGLISH_CUES for w in re.findall(r"[A-Za-z]+", text)):
        return False
    own = catalog.derived("policy.tool_subject_words", _tool_subject_words)
    tools = [own[catalog.position(n)] for n in names if n in catalog]
    # a command, a name from code ("where is parse_config defined?") or a question about the user's
    # own work ("good afternoon! where do we parse the JWT token?", a helper's variant of route-14,
    # 2026-12-05) may be what a thin tool does
    thin_covers = _is_command(text) or names_code(text) or bool(_OWN_WORK_RE.search(text))
    names_goods = catalog.derived("policy.names_goods", _names_goods)
    goods = bool(words & GOODS_QUESTION_WORDS) and any(names_goods[catalog.position(n)] for n in names if n in catalog)
    # a problem report beside a support tool ("my laptop won't turn on" beside "Create an IT helpdesk
    # ticket."): the tool covers any problem, as a web search covers any subject
    if reports_problem(text) and support_tools(catalog).intersection(names):
        return False
    return bool(tools) and not goods and not any(t is None or words & t or (thin_covers and len(t) < THIN_TOOL_WORDS)
                                                 for t in tools)


def _names_goods(catalog: Catalog) -> tuple[bool, ...]:
    """Per tool, whether its text names goods (:data:`~eris_lab.lexicon.GOODS_TOOL_RE`)."""
    pattern = re.compile(GOODS_TOOL_RE)
    return tuple(bool(pattern.search(lexical_text(tool))) for tool in catalog)


def _names_a_word_of(text: str, vocabulary: frozenset[str]) -> bool:
    """Whether a word of ``text``, as written or singular, or a run of two or three of its words
    joined, is in ``vocabulary``: a name split into words is read joined too ("Duck Duck Go" of
    ``duck_duck_go.search`` is duckduckgo)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
    runs = words + [a + b for a, b in zip(words, words[1:])] + [a + b + c for a, b, c in zip(words, words[1:], words[2:])]
    return any(w in vocabulary or singular(w) in vocabulary for w in runs)


_SEARCH_RE = re.compile(r"(?i)\bsearch|\blook(?:s|ing)? up\b")
#: Words a web search's name may hold beside a vendor or an acronym without naming a subject.
_SEARCH_NAME_WORDS = frozenset("search searches query tool api web internet online engine results json".split())
#: An information question: a wh-word opening the message, after an optional "can you tell me".
_INFORMATION_QUESTION_RE = re.compile(
    r"(?i)^\W*(?:(?:can|could|would) (?:you|u) (?:please )?(?:tell me|find out|look up|search)\s+)?"
    # "what a lovely chat" and "how kind of you" exclaim, they ask nothing (round eighteen's variants)
    r"(?:who|what(?!\s+an?\s)|what's|whats|when|where|which|why|how(?!\s+(?:nice|kind|lovely|sweet|cool|great|"
    r"awesome|wonderful|funny|cute|thoughtful|amazing|beautiful|sad|annoying|rude|fun|clever|exciting)\b))\b"
    # a yes/no question about the news of a thing named with an article: "is the new Zelda game out
    # yet?" (round seventeen's variants, 2026-12-07: refused by the gate beside a web search); without
    # such a word it is knowledge the model has ("is a tomato a fruit or a vegetable?", demo none-010)
    # "is it safe to take paracetamol with alcohol" (round nineteen's variants: nine medication tools)
    r"|^\W*(?:is|are)\s+(?:it|they)\s+(?:safe|ok|okay|legal|healthy|dangerous|bad|normal|true)\s+(?:to|for|that)\b"
    r"|^\W*(?:is|are|was|were|has|have|did|does|do|will)\s+(?:the|a|an|there)\s+(?=[^?]{0,80}\b(?:yet|still|"
    r"now|today|tonight|currently|anymore|open|out|available|released|sold out|cancell?ed|delayed|on sale|new|latest)\b)"
    r"[^?]{3,80}\??\W*$")  # the question mark may be left out ("is the Louvre open on Tuesdays", round eighteen)
_ADDRESSEE_RE = re.compile(r"(?i)\b(?:you|your|yours|yourself|u)\b")
_PERSONAL_RE = re.compile(r"(?i)\b(?:my|mine|me|our|ours|us)\b")


def _web_search_tools(catalog: Catalog) -> tuple[str, ...]:
    """The tools of ``catalog`` that search the web on any subject: name and description say
    search and name the web, an engine or an encyclopedia (not news), and every word of the name
    is a search word, an acronym or part of an engine's name (``HNA_WQA.search``,
    ``duck_duck_go.search``; not ``search_for_sea_pictures``)."""
    web_words = OPEN_SUBJECT_WORDS - {"news"}
    out = []
    for tool in catalog:
        text = f"{tool.name.replace('_', ' ').replace('.', ' ')} {tool.description or ''}"
        if not _SEARCH_RE.search(text) or not _names_a_word_of(text, web_words):
            continue
        parts = re.findall(r"[A-Z]+(?![a-z])|[A-Za-z][a-z]*", tool.name)
        named = [p.lower() in _SEARCH_NAME_WORDS | STOPWORDS or (len(p) > 1 and p.isupper()) for p in parts]
        lower = [p.lower() for p in parts]
        for n in (1, 2, 3):  # runs that spell an engine: Google, duck duck go
            for k in range(len(parts) - n + 1):
                if "".join(lower[k:k + n]) in web_words:
                    named[k:k + n] = [True] * n
        if all(named):
            out.append(tool.name)
    return tuple(out)


def open_question(text: str, catalog: Catalog) -> bool:
    """True when ``text`` asks for information on a subject and ``catalog`` can search the web.

    "what is Imjin war" or "who is park ji sung" beside ``HNA_WQA.search`` ("Retrieve up-to-date
    information by searching the web") is a request however low its cosines: neither the
    relevance gate nor the uncovered rule says "no tool fits" then (live_multiple_9-4-1 and 11-4-3
    were refused). The question opens with a wh-word, has a content word, gives fewer than two
    numbers ("How many legs do 10 dogs and 2 monkeys have?" is a computation: BFCL
    live_irrelevance_166-21-2) and does not ask about the assistant ("what is your name?"); a
    news search does not count ("who is ji sung park?" beside ``HNA_NEWS.search`` is BFCL
    live_irrelevance_136-13-2).

    A catalogue's web searches are found once (``Catalog.derived``).
    """
    if not _INFORMATION_QUESTION_RE.search(text) or not _subject_words(text):
        return False
    if len(re.findall(r"\d+", text)) >= 2:  # a computation over the numbers it gives, no lookup
        return False
    asked = re.sub(r"(?i)^\W*(?:can|could|would) (?:you|u)\b", "", text)
    if _ADDRESSEE_RE.search(asked):
        return False
    return bool(catalog.derived("policy.web_search_tools", _web_search_tools))


_WEATHER_TOOL_RE = re.compile(r"(?i)\b(?:weather|forecast)\b")


def asks_the_weather(text: str, catalog: Catalog) -> bool:
    """True when ``text`` asks about the weather by a state of it (``guard.read_weather``: "is it
    foggy on the motorway to Bristol right now?", "will the roads be icy tomorrow?") and
    ``catalog`` holds a tool whose text names the weather or a forecast. As for
    :func:`open_question`, neither the relevance gate nor the uncovered rule refuses it: on a
    catalogue of one-sentence descriptions the message's other nouns (motorway, picnic, school)
    held its cosines down and both refused it (round seventeen's variants, 2026-12-07)."""
    if not read_weather(text):
        return False
    return bool(catalog.derived("policy.weather_tools", _weather_tools))


def _weather_tools(catalog: Catalog) -> frozenset[str]:
    return frozenset(tool.name for tool in catalog if _WEATHER_TOOL_RE.search(lexical_text(tool)))


# ---------------------------------------------------------------------------------------------
# decide
# ---------------------------------------------------------------------------------------------


def _full_roster(rule: Rule, catalog: Catalog, reason: str) -> Decision:
    return Decision(rule=rule, kind="full_roster", names=catalog.names, reason=reason)


def idle_countdowns(text: str, catalog: Catalog) -> frozenset[str]:
    """Countdown tools (``guard.countdown_tools``) that ``text`` cannot need: it names no duration
    and is in a script the duration words can read; empty otherwise.

    "remind me to ring the vet on Thursday" names a day, "nudge me Friday to water the plants" no
    time at all: a timer counts down a duration, so neither needs it (reported case route-27, whose
    ``expected_offer_excludes`` is the timer). The router demotes these in its ranking; a widening
    leaves them out.
    """
    if names_duration(text) or unread_script(text):
        return frozenset()
    return countdown_tools(catalog)


def _ranked_widening(rule: Rule, ranked: Sequence[Hit], catalog: Catalog, knobs: Knobs, note: str,
                     text: str = "") -> Decision:
    """Bounded widening: the ``widen_k`` best-scored tools with whole domains seated.

    A catalogue of at most ``max_whole_roster`` tools, or a widening that would seat every tool,
    is offered whole (kind ``full_roster``), so the rate of full-roster offers stays honest. With
    nothing scored (``ranked`` empty: the router could not read the message) the roster is offered
    whole too: the first ``widen_k`` tools of the catalogue would be a lottery. Either way a
    countdown tool ``text`` cannot need (:func:`idle_countdowns`) is left out (kind ``subset``
    when the roster loses it).
    """
    idle = idle_countdowns(text, catalog)
    if len(catalog) <= max(knobs.max_whole_roster, knobs.widen_k) or not ranked:
        whole = f"{note}: offering the whole roster of {len(catalog)}" + ("" if ranked else " (no tool was scored)")
        names = tuple(n for n in catalog.names if n not in idle)
        if len(names) == len(catalog) or not names:
            return _full_roster(rule, catalog, whole)
        return Decision(rule=rule, kind="subset", names=names,
                        reason=f"{whole} but {', '.join(n for n in catalog.names if n in idle)} (a countdown, "
                               "and the message names no duration)")
    order = [h.name for h in sorted(ranked, key=lambda h: -h.score) if h.name in catalog and h.name not in idle]
    if len(order) < knobs.widen_k:  # too few scored tools: fill up in catalogue order
        seen = set(order) | idle
        order += [n for n in catalog.names if n not in seen]
    names, _ = catalog.seat_domains(order, max(knobs.widen_k, 1))
    names = tuple(n for n in names if n not in idle)  # a seated domain brings its timer along
    return Decision(rule=rule, kind="subset", names=names,
                    reason=f"{note}: offering the {len(names)} best-ranked tools (widen_k {knobs.widen_k})")


def _tie_words(top: Hit, tied: Sequence[Hit]) -> str:
    """"same-domain a, b; unrelated c" for the reason sentence (bad input row 32: tools of the top
    hit's own domain were called unrelated)."""
    domain = domain_of(top.name)
    same = [h.name for h in tied if domain and domain_of(h.name) == domain]
    other = [h.name for h in tied if h.name not in same]
    return "; ".join(filter(None, [f"same-domain {', '.join(same)}" if same else "",
                                   f"unrelated {', '.join(other)}" if other else ""]))


def _rank(scores: dict[str, float], catalog: Catalog) -> tuple[str, ...]:
    return tuple(sorted(scores, key=lambda n: (-scores[n], catalog.position(n))))


def _with_clusters(hits: Iterable[Hit], domains: Iterable[str], catalog: Catalog) -> dict[str, float]:
    """Scores of ``hits`` plus every sibling of ``domains`` at its domain's best score minus 1e-4."""
    scores = {h.name: h.score for h in hits}
    for domain in domains:
        best = max((s for n, s in scores.items() if domain_of(n) == domain), default=0.0)
        for sibling in catalog.cluster(domain):
            scores.setdefault(sibling, best - SIBLING_OFFSET)
    return scores


def decide(text: str, hits: Sequence[Hit], catalog: Catalog, *, recent: Sequence[str] = (),
           knobs: Knobs = Knobs(), follow_up: bool = False, ranked: Sequence[Hit] = (),
           relevance: float | None = None, top_cosine: float | None = None, gloss: str = "",
           figurative: bool = False, previous: str = "") -> Decision:
    """Decide which tools to offer for one message.

    Parameters
    ----------
    text : str
        The (cleaned) user message; read for conversation and continuation cues.
    hits : sequence of Hit
        Scored tools, any order; scores >= ``knobs.forced_floor`` count as forced (lexical).
        Hits naming tools outside ``catalog`` are ignored.
    catalog : Catalog
        The registry: clusters and the full roster come from it.
    recent : sequence of str
        The session's recent successful tools, oldest first; the last ``knobs.dialog_memory`` count.
    knobs : Knobs
        Reads threshold, single_hit_floor, margin, forced_floor, unsure_fallback, empty_fallback,
        dialog_memory, short_max_words, short_max_chars.
    follow_up : bool
        The message continues a dialog (the router saw an earlier user turn): short input is
        then not conversation (``guard.is_conversational``).
    ranked : sequence of Hit
        Every tool's score, threshold or not (the router passes its best ones): what the
        ``"ranked"`` fallbacks widen to. Empty: the given ``hits``, then catalogue order.
    relevance : float, optional
        P(some tool fits) from the relevance gate (``calibration.RelevanceGate``); below
        ``knobs.relevance_floor`` nothing is offered (rule ``NO_TOOL_FITS``) unless a hit is forced
        or the message follows up (``follow_up``) after tools ran (``recent``).
    top_cosine : float, optional
        The message's best raw cosine (the gate's first feature); below ``knobs.uncovered_floor``,
        with no content word of the message in the best-ranked tools' text (:func:`uncovered`),
        nothing is offered (rule ``NO_TOOL_FITS``), under the same exceptions as the gate.
    gloss : str, optional
        The message read word for word in English when it is in another language
        (``router.gloss_foreign``); the short-input guard measures it instead of the message:
        "Raconte-moi une blague" is "tell me joke", as short as "Tell me a joke" (route-20).
    figurative : bool, optional
        The message's tool words were a figure of speech, and the router scored its plain reading
        (``guard.literal_idioms``). With no hit at the threshold left (at the single-hit floor for
        a statement that asks nothing, ``guard.asks_something``), nothing is offered (rule
        ``NO_TOOL_FITS``) under the same exceptions as the gate: the only pull towards a tool was
        the figure ("time flies when you're having fun" widened to a clock and a music player; a
        helper's variants of route-20, 2026-12-05).
    previous : str, optional
        The previous user message. For a follow-up (``follow_up``) :func:`uncovered` reads it with
        the message: "and the one after that?" names no subject of its own, and its previous
        message's subject covers it (round sixteen's variants, 2026-12-07).

    Returns
    -------
    Decision
        ``names`` best first; never raises on any text.

    Notes
    -----
    Rule order and ids: DESIGN.md and issue #2. Re-ranking of cluster siblings at the domain's
    best score minus :data:`SIBLING_OFFSET` keeps the hit that caused a widening in front.
    """
    # 1. dialog pairing (before the short-input guard: "cancel that meeting" after calendar:list
    #    is three words, and a request)
    window = tuple(recent)[-knobs.dialog_memory:] if knobs.dialog_memory else ()
    # read without an apology or a condition in front, or a "would you mind ...-ing" ("sorry to be a
    # pain, could you cross off the milk one?" was past the pairing's word limit; round fifteen's variants)
    request = without_small_talk(text) or text
    request = without_condition(request) or request
    if window:  # "could u pls remvoe the 3rd": the pairing's own words spelt right
        request = pairing_spelling(request)
    paired = _dialog_pairing(plain_gerund(request) or request, catalog, window, confident=[
        h.name for h in hits if h.name in catalog and h.score >= knobs.single_hit_floor])
    if paired is not None:
        return paired

    forced = [h for h in hits if h.name in catalog and h.score >= knobs.forced_floor]
    short_rule = dict(max_words=knobs.short_max_words, max_chars=knobs.short_max_chars, follow_up=follow_up)
    measured = gloss or text
    if not forced and is_conversational(measured, tool_keywords(catalog), **short_rule) and not (
            # short input is still a request when a tool clears the single-hit floor ("lint the
            # project" beside run_linter; guard.only_short)
            only_short(measured, tool_keywords(catalog), **short_rule)
            and any(h.name in catalog and h.score >= knobs.single_hit_floor for h in hits)):
        return Decision(rule=Rule.CONVERSATIONAL, kind="conversational", names=(),
                        reason="short or greeting message with no URL and no tool keyword: conversation")

    # the relevance gate: "no tool fits" is not "unsure" (issue 18); a forced (lexical) hit overrides.
    # It judges a message that stands alone: a follow-up once tools have run ("read the first one"
    # after mail:check) is read with the dialog, and the rules below decide (demo hist-020, hist-026)
    standalone = not forced and not (window and follow_up)
    gate_refuses = (knobs.relevance_floor > 0 and relevance is not None and relevance < knobs.relevance_floor
                    and standalone and not names_declared_keyword(text, catalog))
    low_cosine = knobs.uncovered_floor > 0 and top_cosine is not None and top_cosine < knobs.uncovered_floor and standalone
    # an information question beside a web search, or the weather beside a weather tool, is a request
    # whatever its cosines (open_question, asks_the_weather); asked only when a refusal is in view
    in_view = gate_refuses or low_cosine
    asks_web = open_question(text, catalog)
    served = in_view and (asks_web or asks_the_weather(text, catalog))
    # the web search is seated (_seat_web_search) for a question kept from refusal for it, or one the
    # rules are unsure of with no embedding hit at the single-hit floor ("what's the weather in Paris"
    # keeps its two weather tools; decision_keys' ``confident``) that asks about no thing of the user's
    # ("who emailed me today")
    confident = any(h.name in catalog and knobs.single_hit_floor <= h.score < knobs.forced_floor for h in hits)
    web_question = asks_web and (served or not (confident or _PERSONAL_RE.search(text)))
    if gate_refuses and not served:
        return Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=(),
                        reason=f"relevance {relevance:.2f} below the gate's floor {knobs.relevance_floor:.2f}: "
                               "no tool fits, offering nothing")
    # a figure of speech read plainly: with no hit left, or (a statement that asks nothing) no
    # confident one, the figure was the only pull towards a tool ("I'm feeling a bit under the
    # weather today" kept 13 hits over the demo's calibrated threshold 0.16, best 0.31)
    if figurative and standalone:
        # whether it asks is read plainly too: "let's call it a day" asks nothing (round seventeen)
        floor = knobs.threshold if asks_something(literal_idioms(text) or text) else knobs.single_hit_floor
        if not any(h.name in catalog and h.score >= floor for h in hits):
            return Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=(),
                            reason="the message's tool words were a figure of speech, and read plainly it has no "
                                   f"hit >= {floor:.2f}: no tool fits, offering nothing")
    # a message that only vents asks for nothing: with no confident hit, its words' pull towards a
    # tool is the feeling's (route-01's kind), unless it reports a problem beside a support tool
    if (standalone and only_vents(text) and not (reports_problem(text) and support_tools(catalog))
            and not any(h.name in catalog and h.score >= knobs.single_hit_floor for h in hits)):
        return Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=(),
                        reason=f"the message only vents a feeling, asks for nothing and has no hit >= "
                               f"{knobs.single_hit_floor:.2f}: no tool fits, offering nothing")
    # a message that only reports something done asks for nothing, however confident the tool that
    # would do it again ("I already set an alarm for six": clock:alarm locked), unless a tool keeps
    # a log of such things ("I had a banana" beside log_meal; round fifteen's variants) among its
    # best hits: a harvest log at the threshold is no log of "I watered the greenhouse by hand"
    # (round nineteen's variants, 2026-12-07: a calibrated threshold of 0.11 let it through)
    if standalone and only_reports_done(text) and not any(
            h.name in logging_tools(catalog) and h.score >= knobs.threshold
            for h in sorted((h for h in hits if h.name in catalog), key=lambda h: -h.score)[:_LOG_AMONG_BEST]):
        return Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=(),
                        reason="the message reports something done and asks for nothing, and no tool keeps "
                               "a log of it: no tool fits, offering nothing")
    ranked = tuple(ranked) or tuple(h for h in hits if h.name in catalog)
    if (low_cosine and ranked and not served
            and uncovered(f"{previous} {text}" if previous and follow_up else text,
                          [h.name for h in sorted(ranked, key=lambda h: -h.score)][:max(knobs.widen_k, 1)], catalog)):
        return Decision(rule=Rule.NO_TOOL_FITS, kind="conversational", names=(),
                        reason=f"no word of the message is in the best tools' text and the top cosine "
                               f"{top_cosine:.2f} is below {knobs.uncovered_floor:.2f}: no tool fits, offering nothing")

    # 2. split forced from embedding hits (keep the best score per tool)
    cut_note = ""
    best: dict[str, float] = {}
    for h in hits:
        if h.name in catalog and h.score >= knobs.threshold:
            best[h.name] = max(h.score, best.get(h.name, -1.0))
    forced_hits = [Hit(name=n, score=s) for n, s in best.items() if s >= knobs.forced_floor]
    embed_hits = sorted((Hit(name=n, score=s) for n, s in best.items() if s < knobs.forced_floor),
                        key=lambda h: -h.score)
    if embed_hits and knobs.subset_margin < 2.0:  # calibrated offers: hits near the top, at most widen_k
        near = [h for h in embed_hits if embed_hits[0].score - h.score <= knobs.subset_margin]
        if len(near) > knobs.widen_k:
            # which stay is the widening's order (router.widening_key: the lexical share joins the
            # cosine on a catalogue without routing hints); what stays keeps its own score
            position = {h.name: i for i, h in enumerate(ranked)}
            keep = {h.name for h in sorted(near, key=lambda h: position.get(h.name, len(position)))[:knobs.widen_k]}
            if keep != {h.name for h in near[:knobs.widen_k]}:
                cut_note = (f"; {len(near)} were near the top: the {knobs.widen_k} first by score plus the message's "
                            "lexical share kept (widen_lexical_weight)")
            near = [h for h in near if h.name in keep]
        embed_hits = near

    # 3. demote a lone weak embedding hit
    demoted = ""
    if len(embed_hits) == 1 and embed_hits[0].score < knobs.single_hit_floor:
        demoted = embed_hits[0].name
        embed_hits = []
        if not forced_hits:
            note = (f"lone hit {demoted} at {best[demoted]:.3f} is below the single-hit floor "
                    f"{knobs.single_hit_floor:.2f}")
            domain = domain_of(demoted)
            if knobs.unsure_fallback == "ranked":
                return _seat_web_search(_ranked_widening(Rule.UNSURE_RANKED, ranked, catalog, knobs, note, text),
                                        catalog, web_question, served, (*hits, *ranked))
            if knobs.unsure_fallback == "domain_cluster" and len(catalog.cluster(domain)) > 1:
                names = _rank(_with_clusters([Hit(name=demoted, score=best[demoted])], [domain], catalog), catalog)
                return _seat_web_search(Decision(rule=Rule.UNSURE_DOMAIN_CLUSTER, kind="cluster", names=names,
                                                 reason=f"{note}: offering the {domain} cluster"),
                                        catalog, web_question, served, (*hits, *ranked))
            return _full_roster(Rule.UNSURE_FULL_ROSTER, catalog, f"{note}: offering the full roster")

    # 4. near-tie widening along affinity
    rule: Rule | None = None
    reason = ""
    widened = False
    scores: dict[str, float] = {h.name: h.score for h in embed_hits}
    if embed_hits:
        top = embed_hits[0]
        tied = [h for h in embed_hits[1:] if top.score - h.score <= knobs.margin]
        group = affinity_group(domain_of(top.name))
        allied = [top] + [h for h in tied if group and affinity_group(domain_of(h.name)) == group]
        allied_domains = tuple(dict.fromkeys(domain_of(h.name) for h in allied))
        if tied and len(allied_domains) >= 2:
            scores = _with_clusters(embed_hits, allied_domains, catalog)
            widened = True
            rule = Rule.AFFINITY_MARGIN_UNION
            reason = (f"near-tie within {knobs.margin:.2f} of {top.name} across related domains "
                      f"({', '.join(allied_domains)}; group {group}): offering their clusters")
            # calibrated offers seat no countdown the message names no duration for, as a widening
            # does not: "remind me at 7:45 to take out the trash" seated clock:timer (route-27's kind,
            # a helper's variant, 2026-12-05); the reference design seats whole clusters (handed
            # policy case clock-agenda-near-tie includes the timer)
            idle = (idle_countdowns(text, catalog) & (scores.keys() - {h.name for h in embed_hits})
                    if knobs.subset_margin < 2.0 else frozenset())
            if idle:
                scores = {n: s for n, s in scores.items() if n not in idle}
                reason += f" but {', '.join(sorted(idle))} (a countdown, and the message names no duration)"
        elif len(embed_hits) == 1:
            rule = Rule.SINGLE_STRONG_HIT
            reason = f"one hit, {top.name} at {top.score:.3f}, at or above the single-hit floor"
        else:
            rule = Rule.RANKED_SUBSET
            reason = (f"{len(embed_hits)} hits >= {knobs.threshold:.2f}, top {top.name} at {top.score:.3f}"
                      + (f"; near-tie with {_tie_words(top, tied)} kept ranked" if tied else "") + cut_note)

    # 5. append forced hits, 6. re-rank
    if forced_hits:
        for h in forced_hits:
            scores[h.name] = h.score
        forced_names = ", ".join(h.name for h in sorted(forced_hits, key=lambda h: -h.score))
        if rule is None:
            rule = Rule.LEXICAL_FORCED_ONLY
            reason = f"lexical/forced hits only ({forced_names})" + (f"; lone weak {demoted} demoted" if demoted else "")
        else:
            rule = Rule.MIXED_EMBED_AND_LEXICAL
            reason = f"forced hits ({forced_names}) plus embedding hits: {reason}"
    names = _rank(scores, catalog)
    if widened and knobs.subset_margin < 2.0 and len(names) > knobs.widen_k:
        # calibrated offers stay bounded: the union's clusters seated in rank order, up to widen_k
        names, seated = catalog.seat_domains(names, knobs.widen_k)
        reason += f"; seated {', '.join(seated)} within widen_k {knobs.widen_k}"

    # 7. empty -> full roster (or nothing)
    if not names:
        if knobs.empty_fallback == "ranked":
            return _seat_web_search(_ranked_widening(Rule.UNSURE_RANKED, ranked, catalog, knobs,
                                                     f"no hit >= {knobs.threshold:.2f} and not judged irrelevant",
                                                     text), catalog, web_question, served, (*hits, *ranked))
        if knobs.empty_fallback == "none":
            return Decision(rule=Rule.EMPTY_AFTER_POLICY, kind="conversational", names=(),
                            reason=f"no hit >= {knobs.threshold:.2f}: offering nothing (empty_fallback=none)")
        return _full_roster(Rule.EMPTY_AFTER_POLICY, catalog,
                            f"no hit >= {knobs.threshold:.2f}: offering the full roster")
    kind: Kind = "cluster" if widened else "subset"
    return _seat_web_search(Decision(rule=rule, kind=kind, names=names, reason=reason), catalog, web_question, served,
                            (*hits, *ranked))


#: A report is offered a logging tool only when one is among this many of its best hits (a garden's
#: harvest log ranked below the watering, greenhouse and vent tools for "I watered the greenhouse").
_LOG_AMONG_BEST = 3

#: Decisions that offer what the cosines could not tell apart: an information question beside a web
#: search seats the search in them (:func:`_seat_web_search`); a single strong hit stays one tool, and
#: a dialog pairing its domain's verbs.
_UNSURE_RULES = frozenset({Rule.RANKED_SUBSET, Rule.UNSURE_RANKED, Rule.AFFINITY_MARGIN_UNION, Rule.UNSURE_DOMAIN_CLUSTER})


def _seat_web_search(decision: Decision, catalog: Catalog, web_question: bool, kept_from_refusal: bool,
                     scored: Iterable[Hit] = ()) -> Decision:
    """``decision`` with the catalogue's best web search (:func:`open_question`) seated when
    ``web_question`` and either the rules were unsure (:data:`_UNSURE_RULES`) or the question was
    ``kept_from_refusal`` only because the catalogue can search the web.

    "is the new Zelda game out yet?" on the demo catalogue was kept for ``web:search`` and then
    offered the clock and calendar clusters its low cosines tied (round seventeen's variants,
    2026-12-07); "why is the sky blue" was a ranked subset of the two weather tools "sky" pulled
    (round eighteen's). The search is appended and the order of the rest kept (the top hit may
    still be the tool the question needs: a weather question beside a web search); ``sources``
    records it as ``web question``. One search answers the question: the one ``scored`` (the
    message's hits and ranked tools) highest, the first in catalogue order among unscored ones,
    and none when the rules offer a search already (BFCL's pooled catalogue holds eight, and
    seating all of them added 0.3 tools to its mean offer). A full roster, or nothing offered, is
    left as it is (``empty_fallback = "none"`` is the user's choice).
    """
    if (not web_question or decision.kind in ("full_roster", "conversational")
            or (decision.rule not in _UNSURE_RULES and not kept_from_refusal)):
        return decision
    searches = catalog.derived("policy.web_search_tools", _web_search_tools)
    if not searches or any(n in decision.names for n in searches):
        return decision
    score = _best_scores(scored)
    search = max(searches, key=lambda n: score.get(n, -2.0))  # max keeps the first of equals
    return Decision(rule=decision.rule, kind=decision.kind, names=decision.names + (search,),
                    reason=f"{decision.reason}; seated {search}: an information question beside a web search",
                    sources=decision.sources + ((search, "web question"),), missing=decision.missing)


#: :func:`action_order` moves a tool forward past siblings scoring at most this much more (cosine):
#: enough to undo a near-tie between the verbs of one domain (calendar:list 0.54 against
#: calendar:create 0.47 for "add a calendar entry for friday at 3"), never a clear lead.
ACTION_ORDER_SLACK = 0.10


def requested_action(text: str) -> str:
    """The state-changing CRUD action (:data:`~eris_lab.lexicon.ACTION_WORDS`) an imperative opens with, or "".

    Only the first word after a greeting, "please" or "can you" counts: "email alice that the
    meeting moved" asks for no update, "move the meeting to 3pm" does.
    """
    word = opening_word(text)
    return next((action for action, words in ACTION_WORDS.items() if word in words), "")


def action_of(name: str) -> str:
    """The CRUD action a tool's name says (its first name word in an action set), or ""."""
    for word in name_words(base_name(name)):
        for action, words in ACTION_WORDS.items():
            if word in words:
                return action
    return ""


def action_order(names: Sequence[str], text: str, scores: Mapping[str, float]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``names`` with the tools whose name does what the message asks for first within their domain,
    and the tools moved: ``(names, moved)``.

    ``scores``: each tool's cosine (the offer's sort key, ``offer.ordered``). A tool moves ahead of
    the siblings of its domain that precede it, when the message opens with a CRUD verb
    (:func:`requested_action`), the tool's name says that action and the ones it passes do not, and
    they score at most :data:`ACTION_ORDER_SLACK` more; with no CRUD verb, the message's opening
    word is read the same way as a word of the tool's name ("list my to-dos": ``agenda:list`` ahead
    of ``agenda:remove``, 0.05 above it; round eighteen's variants). The set never changes, only
    its order (the first tool is what a small model picks most often).
    """
    action = requested_action(text)
    verb = "" if action else opening_word(text)
    out = list(names)
    if not (action or verb) or len(out) < 2:
        return tuple(out), ()
    # once per tool: a roster may be long
    does = {name: action_of(name) == action if action else verb in name_words(base_name(name)) for name in out}
    moved = []
    for name in names:
        if not does[name] or name not in scores:
            continue
        i = out.index(name)
        domain = domain_of(name)
        passed = [j for j in range(i) if not does[out[j]] and domain_of(out[j]) == domain]
        if passed and all(scores.get(out[j], 1.0) - scores[name] <= ACTION_ORDER_SLACK for j in passed):
            out.insert(passed[0], out.pop(i))
            moved.append(name)
    return tuple(out), tuple(moved)


def decide_turn(text: str, hits: Sequence[Hit], catalog: Catalog, *, knobs: Knobs = Knobs(),
                recent: Sequence[str] = (), follow_up: bool = False, ranked: Sequence[Hit] = (),
                relevance: float | None = None, failed: Sequence[str] = (), intents: Sequence[Hit] = (),
                last_turn: Sequence[str] | None = (), points_back: bool = False,
                added: Sequence[str] | None = (), previous: str = "", top_cosine: float | None = None,
                gloss: str = "", figurative: bool = False) -> Decision:
    """One message's whole decision: :func:`decide`, then what the conversation adds, in this order:
    :func:`retry_failed` (``failed``), :func:`with_intents` (each clause's best hits),
    :func:`with_slots` (values read from ``text`` and, for a follow-up, the ``previous`` user
    message; nothing is checked once tools ran, ``recent``), :func:`with_memory` (``last_turn``,
    the tools of the previous turn; None leaves memory out, and :func:`with_listing` with it: the
    last of ``recent`` a listing) and :func:`with_added` (tools the user added to the conversation;
    None leaves them out).

    The one owner of this sequence: ``Router.route`` and the embedding strategy
    (``strategies.embedding``, which turns memory and added tools off for its ablations) both call
    it. Parameters as in those functions; ``hits`` feed both :func:`decide` and :func:`retry_failed`.
    """
    decision = decide(text, hits, catalog, recent=recent, knobs=knobs, follow_up=follow_up, ranked=ranked,
                      relevance=relevance, top_cosine=top_cosine, gloss=gloss, figurative=figurative,
                      previous=previous)
    decision = retry_failed(decision, failed, hits, catalog, knobs, text)
    decision = with_intents(decision, intents, catalog, knobs)
    decision = with_slots(decision, catalog, knobs, f"{previous} {text}" if previous and follow_up else text,
                          after_tools=bool(recent))
    if last_turn is not None:
        decision = with_memory(decision, last_turn, ranked, catalog, knobs, points_back=points_back,
                               repeat=bool(REPEAT_RE.match(text)))
        decision = with_listing(decision, text, recent, catalog, ranked)
    if added is not None:
        decision = with_added(decision, added, catalog)
    return decision


# ---------------------------------------------------------------------------------------------
# The decision key: what decide reads of the knobs, for the tuning view's fast path
# ---------------------------------------------------------------------------------------------


def embedding_mask(hits: Sequence[Hit], catalog: Catalog, knobs: Knobs) -> np.ndarray:
    """Which of ``hits`` :func:`decide` counts as embedding hits (its step 2), ``(len(hits),) bool``.

    A hit names a catalogue tool, is the first (best) hit of its name, and scores below
    ``knobs.forced_floor``; the others are forced hits or ignored. ``hits`` sorted descending.
    """
    seen: set[str] = set()
    mask = np.zeros(len(hits), dtype=bool)
    for i, hit in enumerate(hits):
        mask[i] = hit.name in catalog and hit.name not in seen and hit.score < knobs.forced_floor
        seen.add(hit.name)
    return mask


def decision_keys(n_embed: np.ndarray, top: np.ndarray, gaps: np.ndarray, floors: np.ndarray,
                  margin: float, widens: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How :func:`decide`'s steps 3 and 4 read the knobs, for many messages and knob columns at once.

    Given a message's kept hits (:func:`~eris_lab.router.kept_hits` at a threshold), ``decide``
    depends on the knobs only through: ``k``, the number of kept hits; whether the lone
    embedding hit is demoted (step 3, the only read of ``single_hit_floor``); how many embedding
    hits tie with the top (step 4, the only read of ``margin``); and which fallback it reads:
    ``unsure_fallback`` exactly when demoted, ``empty_fallback`` exactly when ``n_embed == 0``
    (step 7); and whether the top embedding hit clears ``single_hit_floor`` (an information question
    beside a web search is seated the search only without one, :func:`_seat_web_search`). Equal keys
    give equal names, kind and rule (only the ``reason`` sentence differs);
    ``tests/test_policy.py`` checks that against ``decide`` on a grid of knobs, and the tuning
    view (``lab.workbench``) memoises one decision per key.

    Parameters
    ----------
    n_embed : ndarray of int, shape ``(n_messages, n_columns)``
        Embedding hits (:func:`embedding_mask`) among each message's kept hits, per column.
    top : ndarray of float, shape ``(n_messages,)``
        Each message's best embedding score (nan when it has none).
    gaps : ndarray of float, shape ``(n_messages, n_gaps)``
        ``top`` minus each further embedding score, non-decreasing, padded with +inf.
    floors : ndarray of float, shape ``(n_columns,)``
        ``single_hit_floor`` of each column.
    margin : float
        The near-tie ``margin`` (cosine units).
    widens : ndarray of bool, shape ``(n_messages,)``, optional
        Whether a near-tie can widen the message's offer at all: its top embedding hit's domain
        belongs to an affinity group (:func:`affinity_group`). Where it cannot, step 4 keeps the
        ranked subset whatever ties, so ``tied`` is reported 0 and a margin drag re-decides
        nothing (a catalogue without affinity groups, such as BFCL's, never widens).

    Returns
    -------
    demoted : ndarray of bool, shape ``(n_messages, n_columns)``
    tied : ndarray of int, shape ``(n_messages, n_columns)``
        Embedding hits after the top within ``margin`` of it (a prefix of them, as ``gaps`` grows);
        0 where ``widens`` is False.
    confident : ndarray of bool, shape ``(n_messages, n_columns)``
        An embedding hit is kept and the top one is at or above the column's ``single_hit_floor``.
    """
    with np.errstate(invalid="ignore"):
        demoted = (n_embed == 1) & (top[:, None] < np.asarray(floors, dtype=float)[None, :])
        confident = (n_embed > 0) & (top[:, None] >= np.asarray(floors, dtype=float)[None, :])
    within = (gaps <= float(margin)).sum(axis=1)
    if widens is not None:
        within = np.where(np.asarray(widens, dtype=bool), within, 0)
    tied = np.minimum(np.maximum(n_embed - 1, 0), within[:, None])
    return demoted, tied, confident
