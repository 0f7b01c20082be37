"""Secret redaction: recall, precision and false redactions on the labelled corpus (whole and per
kind), its speed on ordinary and adversarial inputs, and the latency of logging a large session.

    .venv/bin/python tests/bench/bench_secrets.py              # both corpora: recall, precision, false redactions
    .venv/bin/python tests/bench/bench_secrets.py --verbose    # ... and every miss and false redaction
    .venv/bin/python tests/bench/bench_secrets.py --corpus tests/fixtures/secrets_blind.jsonl  # one of them
    .venv/bin/python tests/bench/bench_secrets.py --speed      # MB/s of find_secrets on each speed input
    .venv/bin/python tests/bench/bench_secrets.py --large-log  # a 3 MB memory_reflect log beside another caller's reads

**The corpus**, `tests/fixtures/secrets_corpus.jsonl`: texts with fake, format-valid secrets in
context (`label: secret`, the values in `secrets`) and look-alikes that must survive (`label:
benign`). Its first 156 lines were written with the first detectors. The rest (lines 157 on,
287 texts with 329 secrets and 122 look-alikes) were written before the detectors were changed, so
that the rules were not fitted to them: a one-off script filled templates of developer chat,
terminal sessions, config files and dotfiles (several wordings per kind: framework secret keys,
cookies and session ids, passwords in prose and on command lines, dotfiles, unlabelled AWS secret
keys beside their key id, keys wrapped across lines, passwords that hold "your", "example",
"insert" or "(", newer provider formats taken from gitleaks' rule set, headers, assignments in
many languages) with values from a seeded random generator (human-style passwords from a word
list, random tokens in each provider's alphabet and length), and the look-alikes by hand from the
false redactions seen in use (an account id, names inside ARNs, a public Mapbox `pk.` token, SQL
bind names, `psql --password mydb`, Helm `existingSecret`, environment and template references,
`--password-stdin`, placeholders, hashes, ids, public keys, prose about passwords and tokens).
Every value is fake.

**The second corpus**, `tests/fixtures/secrets_blind.jsonl` (434 texts: 279 with 314 secrets, 155
look-alikes), was written blind by another hand that never saw the rules: its own templates and
wordings, its own labelling (public values such as Stripe `pk_`, Mapbox `pk.`, OAuth client ids,
Twilio account SIDs and AWS account ids are look-alikes; of a Slack webhook the last path segment
is the secret, of a Sentry DSN the 32-hex key, of an Azure SAS the `sig` value; each line of a PEM
body is listed). Its first measurement, before any rule was changed for it, was recall 0.895
(281/314) with 5 false redactions. The rules were then changed to what it showed missing (by the
class of the problem, not its values), so it is no longer blind: it is now a second corpus that
holds the line (`tests/core/test_secrets.py` keeps both at recall >= 0.95 with <= 2 false
redactions). Where the two corpora disagree (a Twilio API key SID `SK...` and a service account's
`private_key_id` are secrets in the first, identifiers in the second), the rules follow the first.

A secret counts as caught when its value no longer appears whole in the redacted text; a
redaction is false when it touches no labelled secret (any redaction of a look-alike is false).
When the `detect-secrets` package is installed (`pip install detect-secrets`), its default
plugins are measured the same way beside ours (each line scanned; every value it reports is
replaced).

**Speed** (`--speed`): each input is built from a fixed seed; the figure is the best of three
runs (`--runs`) of `find_secrets` over the whole input, by the wall clock and by the process's CPU
time. `--large-log` starts the server in this process (the in-memory MCP client, a fresh SQLite
data directory, turns kept up to 1,000,000 characters), logs three turns of 1 MB each with
secrets in them while a second task lists memories in a loop, and prints the log call's latency
and how the reads fared meanwhile.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))

from agent_memory.core.memories.secrets import find_secrets  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "secrets_corpus.jsonl"
BLIND = ROOT / "tests" / "fixtures" / "secrets_blind.jsonl"
CORPORA = [CORPUS, BLIND]
Spans = list[tuple[int, int]]
MB = 1_000_000


def load(corpus: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in corpus.read_text().splitlines() if line.strip()]


def ours(text: str) -> Spans:
    return [(f.start, f.end) for f in find_secrets(text)]


def detect_secrets_spans() -> Callable[[str], Spans] | None:
    """detect-secrets' default plugins line by line, as its scan of a file runs them (no eager
    search, its default filters), on a file without an extension (its general keyword rules)."""
    try:
        from detect_secrets.core.scan import _is_filtered_out, _scan_line, get_plugins
        from detect_secrets.settings import default_settings
        from detect_secrets.util.code_snippet import get_code_snippet
    except ImportError:
        return None

    def spans(text: str) -> Spans:
        found: Spans = []
        lines = text.split("\n")
        starts = [sum(len(x) + 1 for x in lines[:n]) for n in range(len(lines))]
        with default_settings():
            for n, line in enumerate(lines):
                context = get_code_snippet(lines=lines, line_number=n + 1)
                for plugin in get_plugins():
                    for secret in _scan_line(plugin=plugin, filename="notes", line=line, line_number=n + 1,
                                             enable_eager_search=False, context=context):
                        if _is_filtered_out(required_filter_parameters=["context"], filename=secret.filename,
                                            secret=secret.secret_value, plugin=plugin, line=line, context=context):
                            continue
                        value = secret.secret_value or ""
                        at = line.find(value) if value else -1
                        while value and at >= 0:
                            found.append((starts[n] + at, starts[n] + at + len(value)))
                            at = line.find(value, at + len(value))
        return sorted(set(found))

    return spans


def apply(text: str, spans: Spans) -> str:
    out, at = [], 0
    for start, end in sorted(spans):
        if start < at:
            start = at
        out += [text[at:start], "[REDACTED]"]
        at = max(at, end)
    return "".join(out) + text[at:]


def occurrences(text: str, value: str) -> Spans:
    found, at = [], text.find(value)
    while at >= 0:
        found.append((at, at + len(value)))
        at = text.find(value, at + 1)
    return found


def measure(records: list[dict], detector: Callable[[str], Spans]) -> dict:
    """Totals, and the same per kind (a look-alike's kind is prefixed `benign:`)."""
    kinds: dict[str, dict] = defaultdict(lambda: {"secrets": 0, "caught": 0, "redactions": 0, "true": 0})
    misses: list[str] = []
    false: list[str] = []
    for record in records:
        text, values = record["text"], record["secrets"]
        kind = kinds[record["kind"] if record["label"] == "secret" else f"benign:{record['kind']}"]
        spans = detector(text)
        redacted = apply(text, spans)
        where = [span for value in values for span in occurrences(text, value)]
        for value in values:
            kind["secrets"] += 1
            if value in redacted:
                misses.append(f"{record['id']} {record['kind']}: {value[:40]}")
            else:
                kind["caught"] += 1
        for start, end in spans:
            kind["redactions"] += 1
            if any(start < e and s < end for s, e in where):
                kind["true"] += 1
            else:
                false.append(f"{record['id']} {record['kind']}: {text[start:end][:40]!r}")
    total = {key: sum(k[key] for k in kinds.values()) for key in ("secrets", "caught", "redactions", "true")}
    return {**total, "recall": total["caught"] / total["secrets"] if total["secrets"] else 1.0,
            "precision": total["true"] / total["redactions"] if total["redactions"] else 1.0,
            "false_redactions": len(false), "misses": misses, "false": false, "kinds": dict(kinds)}


def report_corpus(verbose: bool, per_kind: bool, corpus: Path = CORPUS) -> None:
    records = load(corpus)
    print(f"corpus {corpus.name}: {sum(r['label'] == 'secret' for r in records)} texts with "
          f"{sum(len(r['secrets']) for r in records)} secrets, {sum(r['label'] == 'benign' for r in records)} "
          "look-alikes")
    detectors: dict[str, Callable[[str], Spans]] = {"agent_memory.core.memories.secrets": ours}
    other = detect_secrets_spans()
    if other is None:
        print("detect-secrets: not installed (pip install detect-secrets to compare)")
    else:
        detectors["detect-secrets (default plugins)"] = other
    for name, detector in detectors.items():
        result = measure(records, detector)
        print(f"{name}: recall {result['recall']:.3f} ({result['caught']}/{result['secrets']}), "
              f"precision {result['precision']:.3f}, false redactions {result['false_redactions']}")
        if per_kind:
            print(f"  {'kind':28} {'recall':>14} {'false':>6}")
            for kind, k in sorted(result["kinds"].items()):
                recall = f"{k['caught'] / k['secrets']:.2f} ({k['caught']}/{k['secrets']})" if k["secrets"] else "-"
                print(f"  {kind:28} {recall:>14} {k['redactions'] - k['true']:>6}")
        if verbose:
            for line in result["misses"]:
                print("  missed  ", line)
            for line in result["false"]:
                print("  false   ", line)


# -- speed ----------------------------------------------------------------------------------

WORDS = ("the a to of and in is it for on that this with we build deploy server request error retry cache user "
         "session handler config value timeout worker queue database index memory thread process function return "
         "import class self none true false async await logging debug info warning token key password secret auth "
         "login cookie credential rotate vault migration schema column table query latency p99 release branch merge "
         "commit review test fixture").split()


def ordinary_text(size: int, seed: int = 7) -> str:
    """Chat, code, logs, JSON and shell without secrets (but with the words that name them)."""
    rng = random.Random(seed)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    parts: list[str] = []
    total = 0
    while total < size:
        k = rng.randrange(7)
        if k == 0:
            line = (f"2025-10-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:"
                    f"{rng.randrange(60):02d}.{rng.randrange(1000):03d}Z INFO request_id={rng.getrandbits(64):016x} "
                    f"path=/api/v1/orders/{rng.randrange(10000)} status={rng.choice((200, 201, 404, 500))} "
                    f"took={rng.randrange(999)}ms user=u{rng.randrange(999)}")
        elif k == 1:
            line = (f"    def {rng.choice(WORDS)}_{rng.choice(WORDS)}(self, {rng.choice(WORDS)}: str, "
                    f"limit: int = {rng.randrange(100)}) -> dict[str, object]:\n        return "
                    f"self._{rng.choice(WORDS)}.get({rng.choice(WORDS)!r}, {{}})  # {words(6)}")
        elif k == 2:
            line = f"user: {words(rng.randrange(8, 30)).capitalize()}?\nassistant: {words(rng.randrange(20, 60))}."
        elif k == 3:
            line = json.dumps({"id": f"mem_{rng.getrandbits(80):020X}", "content": words(12), "tags": [words(1)],
                               "version": rng.randrange(9), "etag": f"{rng.getrandbits(64):016x}"})
        elif k == 4:
            line = (f"$ git log --oneline -3\n{rng.getrandbits(28):07x} {words(6)}\n{rng.getrandbits(28):07x} "
                    f"{words(5)}\n$ kubectl get pods -n {rng.choice(WORDS)}\n{rng.choice(WORDS)}-7d4b9c8f6d-x2kqp "
                    f"1/1 Running 0 {rng.randrange(60)}m")
        elif k == 5:
            line = (f"commit {rng.getrandbits(160):040x}\nAuthor: Dana <dana@acme.dev>\n\n    {words(10)}\n"
                    f"trace_id={rng.getrandbits(128):032x} span_id={rng.getrandbits(64):016x}")
        else:
            line = f"- {words(rng.randrange(5, 15))} (see https://docs.acme.dev/{rng.choice(WORDS)}/{rng.choice(WORDS)})"
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)[:size]


def speed_inputs(size: int) -> dict[str, str]:
    rng = random.Random(11)
    b64 = string.ascii_letters + string.digits + "+/"
    # The start of a secret's form with no secret after it: a prefix, a name, a flag, a header.
    near = ("password=", "password: ", "sk-", "AKIA", "ghp_", "xoxb-", "eyJ", "Bearer ", "token=", "api_key: ",
            "-----BEGIN PRIVATE KEY-----", "://user:", "Cookie: ", " -p ", "--password ", ":5432:", "secret_key = ",
            "PGPASSWORD=", "pass ", "Authorization: ", "glpat-", "AIza", "sess=", "login: ")
    ordinary = ordinary_text(size)
    inputs = {
        "ordinary (chat, code, logs)": ordinary,
        "one line (no newlines)": ordinary.replace("\n", " "),
        "run of one letter": "a" * size,
        "run of random letters": "".join(rng.choice(string.ascii_letters) for _ in range(size)),
        "run of base64": "".join(rng.choice(b64) for _ in range(size)),
        "run of 'sk-'": ("sk-" * (size // 3 + 1))[:size],
        "run of 'password='": ("password=" * (size // 9 + 1))[:size],
        "near-matches, mixed": "".join(rng.choice(near) + rng.choice(("", "x", "ab", "12")) + rng.choice(" \n")
                                       for _ in range(size // 10))[:size],
        "near-matches 'AKIA'": " ".join(f"AKIA{rng.randrange(10**6)}" for _ in range(size // 11))[:size],
        "near-matches 'password='": "\n".join(f"password={rng.choice(WORDS)}" for _ in range(size // 14))[:size],
    }
    # The mixed near-matches with no line break: what a line holds can no longer stop a search early.
    inputs["near-matches, one line"] = inputs["near-matches, mixed"].replace("\n", " ")
    return inputs


def report_speed(size: int, runs: int) -> None:
    print(f"find_secrets, best of {runs}, inputs of {size / MB:.1f} MB (wall clock; in brackets the process's CPU time,"
          " which other processes on the machine disturb less):")
    for name, text in speed_inputs(size).items():
        best = cpu = float("inf")
        found = 0
        for _ in range(runs):
            start, start_cpu = time.perf_counter(), time.process_time()
            found = len(find_secrets(text))
            best, cpu = min(best, time.perf_counter() - start), min(cpu, time.process_time() - start_cpu)
        print(f"  {name:30} {len(text) / MB / best:7.1f} MB/s ({len(text) / MB / max(cpu, 1e-9):7.1f})  "
              f"{best * 1000:7.1f} ms, {found} found")


# -- a large log ----------------------------------------------------------------------------

def report_large_log(turns: int, turn_chars: int) -> None:
    import logging
    import tempfile

    import anyio
    import structlog
    from mcp import Client

    from agent_memory.config import load_settings
    from agent_memory.tools.server import create_server

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))  # quiet
    secret = "ghp_" + "Zq4T8mW2xL9pR3vB7nK1cY6hJ5dF0sG2aE8u"
    body = ordinary_text(turn_chars)
    contents = [f"{body[: turn_chars // 2]}\ntoken {secret}\n{body[turn_chars // 2: turn_chars - 50]}"
                for _ in range(turns)]

    async def run() -> None:
        with tempfile.TemporaryDirectory() as data:
            settings = load_settings(environ={}, overrides={
                "data_dir": data, "agent_id": "bench", "system_type": "sys1", "team": "red",
                "rate_limit_per_second": 0, "vector_backend": "none", "session_log_max_chars": 1_000_000,
                "compaction_threshold_chars": 0, "log_level": "warning"})
            async with Client(create_server(settings), mode="legacy") as client:
                await client.call_tool("memory_crud", {"action": "create", "items": [{"content": "a note"}]})
                reads: list[float] = []
                done = anyio.Event()

                async def reader() -> None:
                    while not done.is_set():
                        start = time.perf_counter()
                        await client.call_tool("memory_crud", {"action": "list", "limit": 10})
                        reads.append(time.perf_counter() - start)

                async with anyio.create_task_group() as group:
                    group.start_soon(reader)
                    await anyio.sleep(0.05)
                    start = time.perf_counter()
                    result = await client.call_tool("memory_reflect", {
                        "action": "log", "session_id": "big",
                        "turns": [{"role": "tool", "name": "shell", "content": c} for c in contents]})
                    took = time.perf_counter() - start
                    done.set()
                stored = json.dumps(result.structured_content)
                print(f"memory_reflect log of {turns} turns, {sum(map(len, contents)) / MB:.1f} MB: {took:.2f} s; "
                      f"redacted {result.structured_content.get('redacted')}, secret left: {secret in stored}")
                during = sorted(reads)
                if during:
                    print(f"  reads meanwhile: {len(during)}, median {during[len(during) // 2] * 1000:.0f} ms, "
                          f"slowest {during[-1] * 1000:.0f} ms")

    anyio.run(run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true", help="list every miss and false redaction")
    parser.add_argument("--totals", action="store_true", help="the corpus totals only, not per kind")
    parser.add_argument("--speed", action="store_true", help="MB/s on ordinary and adversarial inputs")
    parser.add_argument("--size", type=float, default=1.0, help="--speed: MB per input (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="--speed: runs per input, the best is shown")
    parser.add_argument("--large-log", action="store_true", help="latency of a 3 MB log beside another caller")
    parser.add_argument("--corpus", type=Path, action="append",
                        help="the labelled corpus (repeatable; default: both fixtures, each reported)")
    args = parser.parse_args(argv)
    if args.speed:
        report_speed(int(args.size * MB), args.runs)
    elif args.large_log:
        report_large_log(3, MB - 1000)
    else:
        for corpus in args.corpus or CORPORA:
            report_corpus(args.verbose, not args.totals, corpus)
    return 0


if __name__ == "__main__":
    sys.exit(main())
