"""For bench_retrieve.py: how fast entries become searchable by meaning, beside what the embedder
alone does on the same texts (issue 26 items 1-2).

- `embedder_throughput`: the server's model (int8 compute, as the server loads it) embedding a
  sample of the bench's own texts in this process, in batches of the indexer's size, on a thread
  niced as the indexing thread is: one session on 1 and on 2 ONNX threads, and two one-thread
  sessions sharing each batch (the indexer uses one thread while writes arrive and the two
  sessions once they pause); the best of these is what indexing is compared with. Measured right
  after the server has caught up (it is then idle), so the machine's load is as close as it gets
  to the load the indexer saw.
- `indexing_breakdown`: the server's own totals (`vector_indexing_caught_up` in its JSON log:
  seconds spent reading the outbox, embedding, writing the index, forgetting outbox rows, in
  transactions, and waking up), as shares of the indexing wall time.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import Any


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}/{fifteen:.1f}"


def _niced(fn: Any) -> Any:
    """Run `fn` on a thread niced like the indexing thread (nice 10 on Linux); returns its result."""
    out: dict[str, Any] = {}

    def work() -> None:
        with suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        out["value"] = fn()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return out["value"]


def embedder_throughput(items: list[str], sample: int, batch: int) -> dict[int, float]:
    """Texts per second on `sample` of `items` spread evenly: one session on 1 and on 2 ONNX
    threads, and two one-thread sessions sharing each batch (`SplitEmbedder`, as the indexer
    embeds once writes pause)."""
    from agent_memory.storage.embedding.embedder import OnnxEmbedder, default_model_files
    from agent_memory.storage.embedding.split import SplitEmbedder
    from agent_memory.storage.embedding.task import lower_thread_priority

    step = max(1, len(items) // max(1, sample))
    texts = items[::step][:sample]
    helper = ThreadPoolExecutor(max_workers=1, initializer=lower_thread_priority)

    def make() -> dict[Any, Any]:  # on a niced thread, as the server's: ONNX's own threads inherit it
        one = OnnxEmbedder(default_model_files(), threads=1)
        # 2: one session on two threads; "2x1": two one-thread sessions sharing each batch (the indexer's)
        return {1: one, 2: one.with_threads(2), "2x1": SplitEmbedder(one, one.with_threads(1), helper)}

    embedders = _niced(make)
    for embedder in embedders.values():
        embedder.embed_array(texts[:16])  # warm-up
    rates: dict[Any, list[float]] = {key: [] for key in embedders}
    half = len(texts) // 2
    for part in (texts[:half], texts[half:]):  # interleaved: drift hits both alike
        for threads, embedder in embedders.items():
            def run(embedder: Any = embedder, part: list[str] = part) -> float:
                started = time.perf_counter()
                for start in range(0, len(part), batch):
                    embedder.embed_array(part[start:start + batch])
                return time.perf_counter() - started
            rates[threads].append(len(part) / _niced(run))
    return {threads: statistics.mean(values) for threads, values in rates.items()}


def _label(threads: Any) -> str:
    return {1: "1 thread", 2: "1 session on 2 threads", "2x1": "2 one-thread sessions"}.get(threads, str(threads))


def caught_up(log_path: Path) -> dict[str, Any] | None:
    """The server's last `vector_indexing_caught_up` totals, if any."""
    last = None
    for line in log_path.read_text().splitlines():
        if line.startswith("{") and '"vector_indexing_caught_up"' in line:
            last = json.loads(line)
    return last


def report(label: str, size: int, indexed_seconds: float, log_path: Path, items: list[str], sample: int,
           batch: int, during: list[float]) -> None:
    """Print the indexing rate beside the embedder's own throughput, where indexing time went,
    and retrieve round trips measured while indexing ran."""
    rate = size / indexed_seconds
    totals = caught_up(log_path)
    if during:
        ordered = sorted(during)
        p95 = ordered[min(len(ordered) - 1, int(round(.95 * (len(ordered) - 1))))]
        print(f"    retrieve (hybrid) while indexing: {len(during)} calls, p50 {statistics.median(during):.1f} ms "
              f"p95 {p95:.1f} ms")
    if totals:
        seconds = totals["seconds"]
        parts = ", ".join(f"{name} {value:.1f} s ({100 * value / indexed_seconds:.0f}%)"
                          for name, value in seconds.items())
        busy = totals["busy_s"]
        print(f"    indexer: {totals['rows']} rows, {totals['embedded']} embedded in {totals['batches']} batches; "
              f"busy {busy:.1f} s of {indexed_seconds:.1f} s; {parts} (shares of the wall time; pipelined "
              f"steps overlap)")
        if seconds["embed"]:
            print(f"    in-server embedding alone: {totals['embedded'] / seconds['embed']:.0f} texts/s "
                  f"(indexing rate / that = {rate / (totals['embedded'] / seconds['embed']):.2f})")
    if sample:
        rates = embedder_throughput(items, sample, batch)
        best = max(rates.values())
        print(f"    embedder alone on {min(sample, size)} of these texts, batches of {batch}, niced: "
              + ", ".join(f"{_label(t)} {r:.0f}/s" for t, r in rates.items())
              + f"; indexing {rate:.0f}/s = {rate / best:.2f} of the best  [{load()}]")
