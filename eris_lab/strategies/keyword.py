"""Keyword groups: the classic baseline that embedding routers are compared with.

A small core is always offered; each group (by default: one per toolkit) is added when its
pattern matches any of the latest four messages; tools no pattern covers are always offered
(a keyword router cannot hide what it cannot recognise).
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from ..catalog import Catalog, base_name, name_words, toolkit_of
from ..guard import unread_script
from ..lexicon import GENERIC_WORDS
from ..policy import Hit, Rule
from ..router import Routed
from .base import Context, Strategy, latest_messages, subset_offer

__all__ = ["KeywordGroups", "derive_groups"]




def derive_groups(catalog: Catalog, *, min_len: int = 4) -> dict[str, tuple[str, tuple[str, ...]]]:
    """One group per toolkit: ``{toolkit: (regex, tool names)}``.

    The regex matches, as a word prefix and case-insensitively, the toolkit's and its tools'
    name words and descriptor ``keywords`` (``min_len`` letters or more, not in
    :data:`~eris_lab.lexicon.GENERIC_WORDS`); a keyword in a script without spaces (Chinese,
    Japanese...) matches anywhere, from two characters. A toolkit without any such word gets no group.
    """
    words: dict[str, set[str]] = {}
    members: dict[str, list[str]] = {}
    for tool in catalog:
        kit = toolkit_of(tool.name)
        members.setdefault(kit, []).append(tool.name)
        found = words.setdefault(kit, set())
        for w in name_words(base_name(tool.name)) + tuple(k.lower() for k in tool.keywords):
            if (len(w) >= min_len or (len(w) >= 2 and unread_script(w))) and w not in GENERIC_WORDS:
                found.add(w)
    groups = {}
    for kit, found in words.items():
        if found:
            groups[kit] = (_group_pattern(found), tuple(members[kit]))
    return groups


def _group_pattern(words: set[str]) -> str:
    """Spaced words match as a word prefix; words of a script without spaces anywhere in a run.

    ``\\b`` never falls inside a run of Chinese or Japanese text, so "天气" must match without it
    (issue 16); such a keyword counts from two characters.
    """
    ordered = sorted(words, key=lambda w: (-len(w), w))
    spaced = [re.escape(w) for w in ordered if not unread_script(w)]
    other = [re.escape(w) for w in ordered if unread_script(w)]
    parts = ([r"\b(?:" + "|".join(spaced) + r")\w*"] if spaced else []) + (["(?:" + "|".join(other) + ")"] if other else [])
    return "(?i)" + "|".join(parts)


class KeywordGroups(Strategy):
    """Core + pattern-matched groups + tools unknown to the patterns.

    Parameters
    ----------
    core : sequence of str
        Tools always offered (names not in the catalogue are ignored). Default none.
    groups : mapping of str to (regex str, sequence of tool names), optional
        Default: :func:`derive_groups` of the fitted catalogue.
    window : int
        How many of the latest messages (history + this one) the patterns look at. Default 4.
    """

    name = "keyword"

    def __init__(self, *, core: Sequence[str] = (), groups: Mapping[str, tuple[str, Sequence[str]]] | None = None,
                 window: int = 4) -> None:
        self.core = core
        self.groups = groups
        self.window = window

    def _fit(self, catalog: Catalog) -> None:
        groups = self.groups if self.groups is not None else derive_groups(catalog)
        self.groups_ = {k: (re.compile(p), tuple(n for n in names if n in catalog)) for k, (p, names) in groups.items()}
        covered = {n for _, names in self.groups_.values() for n in names}
        self.unknown_ = tuple(n for n in catalog.names if n not in covered)
        self.core_ = tuple(n for n in self.core if n in catalog)

    def _route(self, text: str, context: Context) -> Routed:
        messages = latest_messages(text, context, self.window)
        matched: list[tuple[str, int]] = []
        for kit, (pattern, names) in self.groups_.items():
            count = sum(len(pattern.findall(m)) for m in messages)
            if count:
                matched.append((kit, count))
        matched.sort(key=lambda kc: -kc[1])  # stable: ties keep catalogue order
        hits = [Hit(name=n, score=float(c)) for kit, c in matched for n in self.groups_[kit][1]]
        names = list(self.core_) + [h.name for h in hits] + list(self.unknown_)
        reason = (f"matched groups {', '.join(k for k, _ in matched)}" if matched else "no group pattern matched")
        reason += f"; core {len(self.core_)}, unknown to patterns {len(self.unknown_)}"
        rule = Rule.RANKED_SUBSET if matched else Rule.EMPTY_AFTER_POLICY
        offer = subset_offer(self.catalog_, hits, rule=rule, reason=reason, names=names)
        return Routed(text=text, hits=tuple(hits[:20]), decision=offer.decision, offer=offer)
