"""Exact search in memory against Chroma's HNSW index, per partition size: where the crossover is.

    python tests/bench/bench_exact_vectors.py [--sizes 1000 10000 40000 80000] [--queries 100] [--k 100]

For each size, one `ChromaIndex` (a real PersistentClient in a temporary directory) holds that
many 384-dimension unit vectors in one collection. The same queries (k nearest, as retrieval asks:
`retrieval_candidate_depth` 100) go, in turn, to the HNSW index (`vector_exact_max = 0`) and to the
exact mirror (`storage/chroma/exact.py`), so drift on a shared machine hits both alike. Prints the
p50/p95 per query, the time to load the mirror from the collection, its memory, and recall@k of
the HNSW answer against the exact one (the index is approximate; the mirror is not).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))
from agent_memory.storage.chroma.chroma_index import ChromaIndex, collection_name  # noqa: E402

DIM = 384


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 40_000, 80_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--k", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    print(f"{'size':>7} {'hnsw p50':>9} {'p95':>7} {'exact p50':>10} {'p95':>7} {'ratio':>6} {'load ms':>8} "
          f"{'MB':>5} {'hnsw recall@k':>14}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            index = ChromaIndex(Path(tmp) / "chroma", exact_max=size, exact_total=size)
            index.open()
            try:
                name = collection_name("agent:bench", "default")
                data = rng.standard_normal((size, DIM)).astype(np.float32)
                data /= np.linalg.norm(data, axis=1, keepdims=True)
                ids = [f"e{i}" for i in range(size)]
                for start in range(0, size, 5000):
                    index.upsert(name, ids[start:start + 5000], data[start:start + 5000],
                                 [{"n": i} for i in range(start, min(size, start + 5000))])
                queries = rng.standard_normal((args.queries, DIM)).astype(np.float32).tolist()
                hnsw = ChromaIndex(Path(tmp) / "chroma")  # the same collection, never mirrored
                hnsw._client, hnsw._lock_fd = index._client, None
                began = time.perf_counter()
                index.query([name], queries[0], args.k)  # begins the mirror's load
                for loader in index._loaders:
                    loader.join()
                load_ms = (time.perf_counter() - began) * 1000
                assert index.exact.held().get(name) == size, index.exact.held()
                slow, fast, overlap = [], [], []
                for query in queries:
                    mark = time.perf_counter()
                    approx = hnsw.query([name], query, args.k)
                    slow.append(time.perf_counter() - mark)
                    mark = time.perf_counter()
                    exact = index.query([name], query, args.k)
                    fast.append(time.perf_counter() - mark)
                    overlap.append(len({i for i, _ in approx} & {i for i, _ in exact}) / len(exact))
                hnsw._client = None
                p50s, p50f = statistics.median(slow) * 1000, statistics.median(fast) * 1000
                print(f"{size:>7} {p50s:>8.2f}ms {_p95(slow):>6.2f} {p50f:>9.2f}ms {_p95(fast):>6.2f} "
                      f"{p50s / p50f:>5.1f}x {load_ms:>8.0f} {size * DIM * 4 / 1e6:>5.0f} "
                      f"{statistics.mean(overlap):>14.3f}")
            finally:
                index.close()


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)] * 1000


if __name__ == "__main__":
    main()
