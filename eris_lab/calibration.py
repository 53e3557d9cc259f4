"""Label-free calibration: knobs fitted to one catalogue and one embedder, with no labelled query.

DESIGN.md's reference thresholds were set for one model on hint-rich descriptors and do not
transfer (issue 18: on a hint-less catalogue of 200 tools they offered the whole roster for 95% of
messages). :func:`calibrate` derives the knobs from the catalogue itself:

1. **Pseudo-queries** (:func:`pseudo_queries`): texts a user might send, made from each tool's own
   text: worked examples where a descriptor has them, else the descriptions of its parameters.
   Name words and description sentences were measured and rejected: they are in the tool vector
   already, so they score far above real messages (below, ``Notes``).
2. **Negatives** (:func:`load_negatives`): chit-chat, idioms and requests a model answers itself,
   English and German (``data/negatives.txt``, written for this project, CC0).
3. **Fit**, for a miscoverage ``alpha`` (target recall ``1 - alpha``): split conformal prediction
   over tools (Angelopoulos & Bates, "A Gentle Introduction to Conformal Prediction", 2021,
   section 1) with nonconformity ``top cosine - gold cosine`` gives ``subset_margin``; with the
   gold tool's rank it gives the widening size ``widen_k`` (also the offer cap); ``threshold`` is
   the ``alpha / 2`` quantile of gold cosines; ``single_hit_floor`` the lowest top cosine above
   which a lone top hit is right for ``1 - alpha`` of pseudo-queries.
4. **Relevance gate** (:class:`RelevanceGate`): a logistic regression (scikit-learn) on
   :data:`GATE_FEATURES`, pseudo-queries against negatives; its floor keeps ``1 - alpha`` of the
   pseudo-queries. It separates "no tool fits" (offer nothing) from "unsure" (widen, bounded).

The coverage promise holds for messages exchangeable with the pseudo-queries; real messages are
not, and the report states promised against observed coverage per suite (``bench strategies``).

:func:`calibrated_knobs` caches the result under the catalogue's fingerprint and the model id
(``_files.cache_dir() / "calibration"``); ``eris-lab calibrate`` writes it as a knobs TOML.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ._files import cache_dir, repo_root
from .catalog import Catalog, Tool, name_words
from .embed import Embedder, normalize_rows
from .errors import DataError
from .knobs import Knobs
from .lexicon import BACKGROUND_QUERIES, STOPWORDS

__all__ = [
    "GATE_FEATURES", "RelevanceGate", "PseudoQuery", "pseudo_queries", "load_negatives", "conformal_quantile",
    "calibrate", "calibrated_knobs", "catalog_fingerprint", "NEGATIVES_PATH", "DEFAULT_ALPHA",
]

#: The shipped negatives (see data/README.md).
NEGATIVES_PATH = repo_root() / "data" / "negatives.txt"
#: Target miscoverage: offers should hold the right tool for 1 - alpha of messages (issue 18: 0.95).
DEFAULT_ALPHA = 0.05
#: Bounds on the fitted widening size: at least 3 tools, at most 20 (prompt budget of a 270M model).
WIDEN_BOUNDS = (3, 20)
#: Features of the relevance gate, in the order of ``Knobs.relevance_weights[1:]``.
GATE_FEATURES = ("top_cosine", "top_z", "top_gap", "chitchat_cosine", "word_overlap")
#: Fewer pseudo-queries than this and the catalogue is too small to fit anything on its own: the
#: reference knobs stay (with bounded widening); measured on the reported routing cases, a gate fitted
#: on a dozen pseudo-queries of a 4-tool catalogue refused 10 of 15 real requests.
MIN_PSEUDO_QUERIES = 40
CACHE_VERSION = 2  # bump when the fit changes, so stale cached knobs are not reused

_WORD_RE = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
_MIN_STD = 0.03  # guards a z-score against a tool the negatives never move


@dataclass(frozen=True, slots=True)
class PseudoQuery:
    """A message made from a tool's own text, labelled with that tool (no human label)."""

    text: str
    tool: int  # row of the tool in the catalogue


def _content_words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD_RE.findall(text)) if w not in STOPWORDS}


def _parameter_descriptions(tool: Tool) -> list[str]:
    params = tool.parameters if isinstance(tool.parameters, dict) else {}
    props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
    required = [p for p in params.get("required", []) if isinstance(p, str)] if isinstance(
        params.get("required"), list) else []
    order = list(dict.fromkeys(required + list(props)))
    out = []
    for name in order:
        spec = props.get(name)
        text = spec.get("description") if isinstance(spec, dict) else None
        if isinstance(text, str) and len(text.split()) >= 3:
            out.append(" ".join(text.split()[:40]))
    return out


def pseudo_queries(catalog: Catalog, *, per_tool: int = 3) -> tuple[PseudoQuery, ...]:
    """Up to ``per_tool`` pseudo-queries per tool, from its own text.

    Sources, in order: the descriptor's good examples (user texts); the descriptions of its
    parameters, required ones first; for a tool with neither, its description's last sentence
    (when there are two or more), else its name words.

    Notes
    -----
    Measured on the pooled BFCL catalogue (1,041 tools, all-MiniLM-L6-v2): real live_multiple
    messages put the gold tool at cosine median 0.46 and within the top 10 for 0.726 of them.
    Parameter descriptions as pseudo-queries: median 0.54, top 10 for 0.718, close to real. Name
    words (0.78, 0.982) and the first description sentence (0.89, 0.988) are far too easy: they
    are part of the tool's routing vector already.
    """
    out: list[PseudoQuery] = []
    for row, tool in enumerate(catalog):
        texts = [e.text for e in tool.examples_good if e.text.strip()]
        texts += _parameter_descriptions(tool)
        if not texts:
            sentences = [s for s in _SENTENCE_RE.split(tool.description.strip()) if len(s.split()) >= 3]
            texts = [sentences[-1]] if len(sentences) >= 2 else [" ".join(name_words(tool.name))]
        for text in list(dict.fromkeys(texts))[:per_tool]:
            out.append(PseudoQuery(text=text, tool=row))
    return tuple(out)


def load_negatives(path: str | Path | None = None) -> tuple[str, ...]:
    """The negatives: ``data/negatives.txt`` (one message per line, ``#`` comments) plus
    :data:`~eris_lab.lexicon.BACKGROUND_QUERIES`, deduplicated.

    Raises
    ------
    DataError
        The file is missing or not UTF-8 text.
    """
    path = Path(path) if path is not None else NEGATIVES_PATH
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the negatives ({exc.__class__.__name__})", where=str(path)) from None
    texts = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return tuple(dict.fromkeys(texts + list(BACKGROUND_QUERIES)))


def conformal_quantile(scores: np.ndarray, alpha: float) -> float:
    """Split-conformal quantile: the ``ceil((n + 1)(1 - alpha)) / n`` empirical quantile of ``scores``.

    With fewer than ``1 / alpha - 1`` calibration scores no finite quantile carries the
    guarantee; the largest score is returned then (stated in the calibration's provenance).
    (Angelopoulos & Bates 2021, eq. 1.)
    """
    scores = np.sort(np.asarray(scores, dtype=float))
    n = scores.size
    if n == 0:
        return math.inf
    rank = math.ceil((n + 1) * (1 - alpha))
    return float(scores[min(rank, n) - 1])


class RelevanceGate:
    """The features of the relevance gate, for one catalogue and embedder.

    Parameters
    ----------
    catalog : Catalog
    tool_vectors : ndarray, ``(n_tools, dim) float32``
        The router's L2-normalised tool vectors.
    negative_vectors : ndarray, ``(n_negatives, dim) float32``
        L2-normalised vectors of :func:`load_negatives`.

    Notes
    -----
    Features (:data:`GATE_FEATURES`): the top cosine; its z-score against that tool's cosines with
    the negatives (a per-tool background, as in hubness corrections); the gap to the second tool;
    the message's highest cosine with any negative (chit-chat similarity); and the share of the
    message's content words found in the three best tools' text (lexical overlap).
    """

    def __init__(self, catalog: Catalog, tool_vectors: np.ndarray, negative_vectors: np.ndarray) -> None:
        self.catalog = catalog
        self.tool_vectors = tool_vectors
        self.negative_vectors = negative_vectors
        background = negative_vectors @ tool_vectors.T  # (n_neg, n_tools)
        self.mean = background.mean(axis=0)
        self.std = np.maximum(background.std(axis=0), _MIN_STD)
        self.tool_words = [_content_words(" ".join([*name_words(t.name), t.description])) for t in catalog]

    def features(self, query_vectors: np.ndarray, texts: Sequence[str], *,
                 exclude_negative: Sequence[int] | None = None) -> np.ndarray:
        """``(n, len(GATE_FEATURES)) float64`` features of ``n`` messages.

        ``exclude_negative[i]``: the row of message ``i`` among the negatives (its own chit-chat
        similarity would be 1.0), or -1.
        """
        scores = query_vectors @ self.tool_vectors.T  # (n, n_tools)
        n, n_tools = scores.shape
        order = np.argsort(-scores, axis=1)[:, :3]
        rows = np.arange(n)
        top = scores[rows, order[:, 0]]
        second = scores[rows, order[:, 1]] if n_tools > 1 else top
        z = (top - self.mean[order[:, 0]]) / self.std[order[:, 0]]
        chat_all = query_vectors @ self.negative_vectors.T
        if exclude_negative is not None:
            for i, j in enumerate(exclude_negative):
                if j >= 0:
                    chat_all[i, j] = -1.0
        chat = chat_all.max(axis=1) if chat_all.shape[1] else np.zeros(n)
        overlap = np.zeros(n)
        for i, text in enumerate(texts):
            words = _content_words(text)
            if words:
                covered = set().union(*(self.tool_words[j] for j in order[i]))
                overlap[i] = len(words & covered) / len(words)
        return np.column_stack([top, z, top - second, chat, overlap]).astype(np.float64)

    @staticmethod
    def probability(features: np.ndarray, weights: Sequence[float]) -> np.ndarray:
        """P(some tool fits) of each row: ``sigmoid(w0 + features @ w[1:])``, ``(n,)``."""
        w = np.asarray(weights, dtype=np.float64)
        return 1.0 / (1.0 + np.exp(-(w[0] + features @ w[1:])))


def catalog_fingerprint(catalog: Catalog) -> str:
    """SHA-256 (16 hex) of what routing reads of each tool: name, description, schema, hints, examples."""
    digest = hashlib.sha256()
    for tool in catalog:
        record = [tool.name, tool.description, tool.short_description, list(tool.routing_hints),
                  [e.text for e in tool.examples_good], tool.parameters]
        digest.update(json.dumps(record, sort_keys=True, default=str).encode("utf-8"))
    return digest.hexdigest()[:16]


def _fit_gate(pos: np.ndarray, neg: np.ndarray) -> tuple[float, ...]:
    from sklearn.linear_model import LogisticRegression

    x = np.vstack([pos, neg])
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000).fit(x, y)
    return (float(model.intercept_[0]), *map(float, model.coef_[0]))


def calibrate(catalog: Catalog, embedder: Embedder, *, tool_vectors: np.ndarray | None = None,
              alpha: float = DEFAULT_ALPHA, base: Knobs | None = None,
              negatives: Sequence[str] | None = None) -> Knobs:
    """Fit knobs for ``catalog`` and ``embedder`` without labelled queries (module docstring).

    Parameters
    ----------
    catalog : Catalog
    embedder : Embedder
    tool_vectors : ndarray, optional
        ``(n_tools, dim) float32`` routing vectors (default: ``router.embed_tools``).
    alpha : float
        Miscoverage in (0, 1); the fit aims at recall ``1 - alpha`` on the pseudo-queries.
    base : Knobs, optional
        Knobs the fit starts from (default the reference ``Knobs()``); fitted knobs replace theirs.
    negatives : sequence of str, optional
        Default :func:`load_negatives`.

    Returns
    -------
    Knobs
        ``threshold``, ``single_hit_floor``, ``subset_margin``, ``widen_k``, ``offer_cap``,
        ``unsure_fallback = empty_fallback = "ranked"``, ``relevance_floor``,
        ``relevance_weights``, and ``notes["calibration"]`` (provenance and promised coverage).

    Raises
    ------
    ValueError
        ``alpha`` outside (0, 1).
    """
    from .router import embed_tools

    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    start = time.perf_counter()
    base = base if base is not None else Knobs()
    vectors = normalize_rows(tool_vectors) if tool_vectors is not None else embed_tools(catalog, embedder.embed)
    negatives = tuple(negatives) if negatives is not None else load_negatives()
    pseudo = pseudo_queries(catalog)
    q = normalize_rows(embedder.embed([p.text for p in pseudo])) if pseudo else np.zeros((0, vectors.shape[1]), np.float32)
    neg = normalize_rows(embedder.embed(list(negatives)))
    n_tools = len(catalog)

    if len(pseudo) < MIN_PSEUDO_QUERIES:
        notes = dict(base.notes)
        notes["calibration"] = {
            "method": f"too few pseudo-queries ({len(pseudo)} < {MIN_PSEUDO_QUERIES}) to fit this catalogue: "
                      "reference knobs with bounded widening, relevance gate off",
            "catalog": catalog.source, "catalog_fingerprint": catalog_fingerprint(catalog), "n_tools": n_tools,
            "embedding_model": embedder.model_id, "alpha": alpha, "n_pseudo_queries": len(pseudo),
            "seconds": round(time.perf_counter() - start, 3), "version": CACHE_VERSION,
        }
        return base.replace(unsure_fallback="ranked", empty_fallback="ranked", embedding_model=embedder.model_id,
                            notes=notes)
    scores = q @ vectors.T
    gold_rows = np.array([p.tool for p in pseudo], dtype=int)
    gold = scores[np.arange(len(pseudo)), gold_rows]
    top = scores.max(axis=1) if len(pseudo) else np.zeros(0)
    gap = top - gold
    rank = (scores > gold[:, None]).sum(axis=1) + 1

    threshold = float(np.quantile(gold, alpha / 2)) if len(pseudo) else base.threshold
    subset_margin = conformal_quantile(gap, alpha)
    widen = conformal_quantile(rank, alpha)
    widen_k = int(min(max(widen if math.isfinite(widen) else n_tools, WIDEN_BOUNDS[0]), WIDEN_BOUNDS[1]))
    # lone top hit: lowest top cosine above which top-1 is the gold tool for 1 - alpha of them
    floor = 1.0
    right = scores.argmax(axis=1) == gold_rows if len(pseudo) else np.zeros(0, bool)
    for cut in np.sort(top)[::-1]:
        chosen = top >= cut
        if right[chosen].mean() >= 1 - alpha:
            floor = float(cut)
    single_hit_floor = float(min(max(floor, threshold), 0.98))

    gate = RelevanceGate(catalog, vectors, neg)
    pos_features = gate.features(q, [p.text for p in pseudo])
    neg_features = gate.features(neg, list(negatives), exclude_negative=range(len(negatives)))
    weights: tuple[float, ...] = ()
    relevance_floor = 0.0
    if len(pseudo) >= 2:
        weights = _fit_gate(pos_features, neg_features)
        p_pos = RelevanceGate.probability(pos_features, weights)
        relevance_floor = float(np.clip(np.quantile(p_pos, alpha), 0.0, 0.99))
    p_neg = RelevanceGate.probability(neg_features, weights) if weights else np.ones(len(negatives))

    guaranteed = len(pseudo) >= math.ceil(1 / alpha) - 1
    notes = dict(base.notes)
    notes["calibration"] = {
        "method": "label-free: pseudo-queries from tool text, negatives from data/negatives.txt; "
                  "split conformal (Angelopoulos & Bates 2021) for subset_margin and widen_k",
        "catalog": catalog.source, "catalog_fingerprint": catalog_fingerprint(catalog), "n_tools": n_tools,
        "embedding_model": embedder.model_id, "alpha": alpha, "promised_coverage": round(1 - alpha, 4),
        "n_pseudo_queries": len(pseudo), "n_negatives": len(negatives),
        "finite_sample_guarantee": guaranteed,
        "pseudo_recall_at_threshold": round(float((gold >= threshold).mean()), 4) if len(pseudo) else None,
        "negatives_kept_empty": round(float((p_neg < relevance_floor).mean()), 4) if weights else None,
        "seconds": round(time.perf_counter() - start, 3), "version": CACHE_VERSION,
    }
    return base.replace(
        threshold=round(max(min(threshold, 0.98), -1.0), 6),
        single_hit_floor=round(single_hit_floor, 6),
        subset_margin=round(min(subset_margin, 2.0), 6) if math.isfinite(subset_margin) else 2.0,
        widen_k=widen_k, offer_cap=widen_k, max_whole_roster=max(base.max_whole_roster, 0),
        unsure_fallback="ranked", empty_fallback="ranked",
        relevance_floor=round(relevance_floor, 6), relevance_weights=tuple(round(w, 6) for w in weights),
        calibration="none", embedding_model=embedder.model_id, notes=notes,
    )


def _cache_path(catalog: Catalog, model_id: str, alpha: float) -> Path:
    key = hashlib.sha256(f"{catalog_fingerprint(catalog)}|{model_id}|{alpha}|{CACHE_VERSION}".encode()).hexdigest()[:20]
    return cache_dir() / "calibration" / f"{key}.toml"


def calibrated_knobs(catalog: Catalog, embedder: Embedder, *, tool_vectors: np.ndarray | None = None,
                     alpha: float = DEFAULT_ALPHA, cache: bool = True) -> Knobs:
    """:func:`calibrate`, cached on disk under the catalogue fingerprint, model id and alpha.

    A warm call reads one small TOML file (well under a second); an unreadable cache entry is
    refitted and rewritten atomically, never trusted.
    """
    path = _cache_path(catalog, embedder.model_id, alpha)
    if cache and path.is_file():
        try:
            return Knobs.load(path)
        except Exception:  # noqa: BLE001 - a damaged cache entry is refitted, not fatal
            pass
    knobs = calibrate(catalog, embedder, tool_vectors=tool_vectors, alpha=alpha)
    if cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            knobs.save(path)
        except OSError:
            pass  # a read-only cache folder only costs the refit next time
    return knobs


def describe(knobs: Knobs) -> dict[str, Any]:
    """The fitted knobs and provenance of a calibration, for ``eris-lab calibrate --json``."""
    fitted = ("threshold", "single_hit_floor", "subset_margin", "widen_k", "offer_cap", "unsure_fallback",
              "empty_fallback", "relevance_floor", "relevance_weights")
    return {"knobs": {k: getattr(knobs, k) for k in fitted}, "provenance": knobs.notes.get("calibration", {})}
