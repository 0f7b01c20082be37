"""The Chroma vector index: one collection per (scope, namespace), cosine space, our own vectors.

Synchronous (Chroma's client is); `VectorRuntime` calls it on its own worker thread. Chroma's
default embedding function (which downloads a model) is never constructed: collections are
created and opened with `embedding_function=None`, and telemetry is off.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

PREFIX = "am_"


def collection_name(scope: str, namespace: str) -> str:
    return PREFIX + hashlib.sha256(f"{scope}\0{namespace}".encode()).hexdigest()[:40]


class ChromaIndex:
    def __init__(self, path: Path | None = None, *, host: str = "", port: int = 8000, ssl: bool = False) -> None:
        self._path = path
        self._host, self._port, self._ssl = host, port, ssl
        self._client: Any = None
        self._collections: dict[str, Any] = {}

    def open(self) -> None:
        import chromadb
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False)
        if self._host:
            self._client = chromadb.HttpClient(host=self._host, port=self._port, ssl=self._ssl, settings=settings)
        elif self._path is None:
            self._client = chromadb.EphemeralClient(settings=settings)
        else:
            self._path.mkdir(parents=True, exist_ok=True)
            self._client = chromadb.PersistentClient(path=str(self._path), settings=settings)
        self._client.heartbeat()

    def close(self) -> None:
        self._collections.clear()
        self._client = None
        if not self._host:
            from chromadb.api.client import SharedSystemClient

            SharedSystemClient.clear_system_cache()  # so the path can be reopened in this process

    def _collection(self, name: str, *, create: bool) -> Any:
        if name in self._collections:
            return self._collections[name]
        if create:
            collection = self._client.get_or_create_collection(
                name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
            )
        else:
            try:
                collection = self._client.get_collection(name, embedding_function=None)
            except Exception:  # chromadb raises NotFoundError / ValueError by version
                return None
        self._collections[name] = collection
        return collection

    def upsert(self, name: str, ids: list[str], vectors: list[list[float]], metadatas: list[dict[str, Any]]) -> None:
        self._collection(name, create=True).upsert(ids=ids, embeddings=vectors, metadatas=metadatas)

    def delete(self, name: str, ids: list[str]) -> None:
        collection = self._collection(name, create=False)
        if collection is not None:
            collection.delete(ids=ids)

    def query(self, names: list[str], vector: list[float], k: int) -> list[tuple[str, float]]:
        """(id, cosine similarity) over the named collections, best first."""
        hits: list[tuple[str, float]] = []
        for name in names:
            collection = self._collection(name, create=False)
            if collection is None:
                continue
            count = collection.count()
            if count == 0:
                continue
            result = collection.query(query_embeddings=[vector], n_results=min(k, count), include=["distances"])
            hits.extend((i, 1.0 - d) for i, d in zip(result["ids"][0], result["distances"][0], strict=True))
        hits.sort(key=lambda hit: hit[1], reverse=True)
        return hits[:k]

    def similarities(self, names: list[str], vector: list[float], ids: list[str]) -> list[tuple[str, float]]:
        """Cosine similarity of `vector` to the stored vectors of `ids` (those found)."""
        import numpy as np

        query = np.asarray(vector, dtype=np.float32)
        found: list[tuple[str, float]] = []
        for name in names:
            collection = self._collection(name, create=False)
            if collection is None:
                continue
            got = collection.get(ids=ids, include=["embeddings"])
            if not got["ids"]:
                continue
            matrix = np.asarray(got["embeddings"], dtype=np.float32)
            norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
            sims = matrix @ query / np.clip(norms, 1e-12, None)
            found.extend(zip(got["ids"], (float(s) for s in sims), strict=True))
        return found

    def reset(self) -> None:
        """Drop every collection of ours (before a rebuild)."""
        for collection in self._client.list_collections():
            name = getattr(collection, "name", collection)
            if str(name).startswith(PREFIX):
                self._client.delete_collection(str(name))
        self._collections.clear()
