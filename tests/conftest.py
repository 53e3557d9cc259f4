"""Shared fixtures: a deterministic fake embedder keeps routing tests model-free and fast."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "cases"


class FakeEmbedder:
    """Bag-of-words hashing embedder: texts sharing words get a higher cosine. Deterministic.

    ``(n, 256) float32``, rows L2-normalised; counts calls and texts for cache tests.
    """

    model_id = "fake:bag-of-words-256"
    dim = 256

    def __init__(self) -> None:
        self.calls = 0
        self.texts_embedded = 0

    def embed(self, texts):
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                h = int(hashlib.md5(word.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms


@pytest.fixture
def fake_embedder():
    return FakeEmbedder()


@pytest.fixture(scope="session")
def _calibration_cache(tmp_path_factory):
    """One calibration cache for the session: a catalogue's label-free calibration is a pure
    function of its fingerprint and the model, and fitting the demo catalogue costs ~10 s."""
    return tmp_path_factory.mktemp("calibration")


@pytest.fixture(scope="session")
def _onnx_cache(tmp_path_factory):
    """One ONNX export of the bundled model per session: it is a pure function of the weights and
    the export settings, and costs ~10 s (torch import included) the first time."""
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch, _calibration_cache, _onnx_cache):
    """Every test gets its own cache folder (never the user's ~/.cache); calibrations and the ONNX
    export are shared within the session (tests of the calibration cache itself unset
    ERIS_LAB_CALIBRATION_CACHE). The encoder is the default unless a test picks one."""
    monkeypatch.setenv("ERIS_LAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ERIS_LAB_CALIBRATION_CACHE", str(_calibration_cache))
    monkeypatch.setenv("ERIS_LAB_ONNX_CACHE", str(_onnx_cache))
    monkeypatch.delenv("ERIS_LAB_ENCODER", raising=False)


def load_cases(name: str) -> dict:
    """A case file copied from the reported cases into tests/cases/."""
    return json.loads((CASES / name).read_text(encoding="utf-8"))


def pytest_terminal_summary(terminalreporter):
    """Say where the browser tests wrote their screenshots (``reports/browser/<UTC stamp>/``)."""
    import _browser

    folder = _browser.shots_written()
    if folder is not None:
        terminalreporter.write_line(f"browser screenshots: {folder}")
