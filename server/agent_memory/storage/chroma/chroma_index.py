"""The Chroma vector index: one collection per (scope, namespace), cosine space, our own vectors.

Synchronous (Chroma's client is); `VectorRuntime` calls it on its own worker thread. Chroma's
default embedding function (which downloads a model) is never constructed: collections are
created and opened with `embedding_function=None`, and telemetry is off.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from agent_memory.storage.chroma.exact import ExactVectors, load
from agent_memory.storage.chroma.ownership import take_lock
from agent_memory.storage.files import create_private_file, make_private, private_dir

PREFIX = "am_"
CHROMA_DB = "chroma.sqlite3"


def collection_name(scope: str, namespace: str) -> str:
    return PREFIX + hashlib.sha256(f"{scope}\0{namespace}".encode()).hexdigest()[:40]


class ChromaIndex:
    def __init__(self, path: Path | None = None, *, host: str = "", port: int = 8000, ssl: bool = False,
                 exact_max: int = 0, exact_total: int = 0) -> None:
        """`exact_max`, `exact_total`: the vectors of a collection, and of all, searched exactly in
        memory (`exact.py`); never for a Chroma server, which other processes may write."""
        self._path = path
        self._host, self._port, self._ssl = host, port, ssl
        self.exact = ExactVectors(0 if host else exact_max, exact_total)
        self._loaders: list[threading.Thread] = []
        # Mirror loads begin only under this lock, and only for the client they were asked of: a
        # query thread must never start one while (or after) the indexing thread closes the client.
        self._guard = threading.Lock()
        self._epoch = 0  # moves on at each close_client
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._lock_fd: int | None = None
        self._known: set[str] = set()  # what the directory held when opened, and what was made private since
        self._stamp = 0  # the directory's mtime when last looked at

    def open(self) -> None:
        """Raises: OwnedElsewhere when another process holds this directory's lock."""
        import chromadb
        from chromadb.config import Settings

        if self._client is not None:
            self.close_client()
        self.exact.clear()  # (close_client did, unless there was no client)
        if self._path is not None and not self._host:
            self.take_ownership()
        settings = Settings(anonymized_telemetry=False)
        if self._host:
            # Chroma's HttpClient talks to the server while it is being built and leaks its HTTP
            # session when that fails, so first make sure the server answers.
            scheme = "https" if self._ssl else "http"
            with urllib.request.urlopen(f"{scheme}://{self._host}:{self._port}/api/v2/heartbeat", timeout=2):
                pass
            self._client = chromadb.HttpClient(host=self._host, port=self._port, ssl=self._ssl, settings=settings)
            try:
                self._client.heartbeat()
            except Exception:
                self.close_client()
                raise
            return
        elif self._path is None:
            self._client = self._open_client(lambda: chromadb.EphemeralClient(settings=settings))
        else:
            private_dir(self._path)
            # Chroma's own SQLite file, made private first: SQLite gives its journals this mode.
            create_private_file(self._path / CHROMA_DB)
            self._known, self._stamp = set(os.listdir(self._path)), os.stat(self._path).st_mtime_ns
            self._client = self._open_client(lambda: chromadb.PersistentClient(path=str(self._path),
                                                                               settings=settings))
        try:
            self._client.heartbeat()
        except BaseException:
            self.close_client()
            raise

    def _open_client(self, factory: Any) -> Any:
        """Chroma caches a system per path, and one whose start failed (a full disk) breaks every
        later attempt (AttributeError): drop the cache so a retry starts afresh."""
        from chromadb.api.client import SharedSystemClient

        try:
            return factory()
        except BaseException:
            SharedSystemClient.clear_system_cache()
            raise

    def take_ownership(self) -> None:
        """Own the local directory (`ownership.py`); raises OwnedElsewhere."""
        assert self._path is not None
        if self._lock_fd is None:
            self._lock_fd = take_lock(self._path)

    @property
    def holds_lock(self) -> bool:
        return self._lock_fd is not None

    @property
    def has_client(self) -> bool:
        return self._client is not None

    def close(self) -> None:
        if self._client is not None:
            self.close_client()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = None

    def close_client(self) -> None:
        with self._guard:
            self._epoch += 1  # no load begins for this client from now on
            loaders, self._loaders = self._loaders, []
            self.exact.clear()
        for loader in loaders:  # never close the client under a mirror's read
            loader.join(timeout=30)
        self._collections.clear()
        # An HttpClient's HTTP sessions (its own and its admin client's) are never closed by
        # Chroma itself.
        for owner in (self._client, getattr(self._client, "_admin_client", None)):
            session = getattr(getattr(owner, "_server", None), "_session", None)
            if session is not None:
                session.close()
        self._client = None
        from chromadb.api.client import SharedSystemClient

        # Stops the client's system: closes an HttpClient's connections, and lets this process
        # reopen the same directory later.
        SharedSystemClient.clear_system_cache()

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

    def upsert(self, name: str, ids: list[str], vectors: Any, metadatas: list[dict[str, Any]]) -> None:
        try:
            self._collection(name, create=True).upsert(ids=ids, embeddings=vectors, metadatas=metadatas)
        except BaseException:
            self.exact.forget(name)  # it may have been applied in part
            raise
        self.exact.upserted(name, ids, vectors)
        self._make_new_private()

    def _make_new_private(self) -> None:
        """Chroma creates each collection's index directory and files (with the umask's modes) at
        its first vectors: take group and other permissions from what appeared since the last
        look. (Files it adds later inside such a directory are in a 0700 directory.)"""
        if not self.local or self._path is None:
            return
        try:
            stamp = os.stat(self._path).st_mtime_ns
            if stamp == self._stamp:
                return
            self._stamp = stamp
            names = set(os.listdir(self._path))
        except OSError:
            return
        for name in names - self._known:
            make_private(self._path / name)
        self._known = names

    def delete(self, name: str, ids: list[str]) -> None:
        collection = self._collection(name, create=False)
        if collection is not None:
            try:
                collection.delete(ids=ids)
            except BaseException:
                self.exact.forget(name)
                raise
        self.exact.deleted(name, ids)

    def query(self, names: list[str], vector: list[float], k: int) -> list[tuple[str, float]]:
        """(id, cosine similarity) over the named collections, best first: exactly from the
        collection's mirror in memory where there is one, else from the HNSW index (and a mirror
        begins loading beside, if the collection is small enough)."""
        hits: list[tuple[str, float]] = []
        epoch = self._epoch
        for name in names:
            exact = self.exact.nearest(name, vector, k)
            if exact is not None:
                hits.extend(exact)
                continue
            collection = self._collection(name, create=False)
            if collection is None:
                continue
            self._mirror(name, collection, epoch)
            # No count() first (it costs as much as the search): Chroma returns at most what it
            # holds, an empty collection nothing.
            result = collection.query(query_embeddings=[vector], n_results=k, include=["distances"])
            hits.extend((i, 1.0 - d) for i, d in zip(result["ids"][0], result["distances"][0], strict=True))
        hits.sort(key=lambda hit: hit[1], reverse=True)
        return hits[:k]

    def _mirror(self, name: str, collection: Any, epoch: int) -> None:
        """Begin loading `name`'s mirror beside the index, if it has none and its client is still open."""
        with self._guard:
            if epoch != self._epoch or (ticket := self.exact.begin(name)) is None:
                return
            loader = threading.Thread(target=load, args=(self.exact, name, ticket, collection), daemon=True,
                                      name="vector-mirror")
            try:
                loader.start()
            except BaseException:  # no thread to be had: the index goes on answering
                self.exact.abandon(name, ticket)
                return
            self._loaders = [t for t in self._loaders if t.is_alive()] + [loader]

    def similarities(self, names: list[str], vector: list[float], ids: list[str]) -> list[tuple[str, float]]:
        """Cosine similarity of `vector` to the stored vectors of `ids` (those found)."""
        import numpy as np

        query = np.asarray(vector, dtype=np.float32)
        found: list[tuple[str, float]] = []
        for name in names:
            exact = self.exact.similarities(name, vector, ids)
            if exact is not None:
                found.extend(exact)
                continue
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

    def counts(self, names: list[str]) -> dict[str, int]:
        """Vectors per collection (0 for collections that do not exist)."""
        found: dict[str, int] = {}
        for name in names:
            collection = self._collection(name, create=False)
            found[name] = collection.count() if collection is not None else 0
        return found

    @property
    def directory(self) -> Path | None:
        return self._path

    @property
    def local(self) -> bool:
        return self._path is not None and not self._host

    def discard(self) -> Path | None:
        """Set a damaged local directory aside (keeping the lock) so a fresh one can be built."""
        if not self.local or self._path is None:
            return None
        self.close_client()
        if not self._path.exists():
            return None
        stamp = int(time.time())
        aside = self._path.with_name(f"{self._path.name}.broken-{stamp}")
        for n in range(1, 100):
            if not aside.exists():
                break
            aside = self._path.with_name(f"{self._path.name}.broken-{stamp}-{n}")
        self._path.rename(aside)
        return aside

    def reset(self) -> None:
        """Drop every collection of ours (before a rebuild)."""
        for collection in self._client.list_collections():
            name = getattr(collection, "name", collection)
            if str(name).startswith(PREFIX):
                self._client.delete_collection(str(name))
        self._collections.clear()
        self.exact.clear()
