"""Secret redaction on the labelled corpus: precision, recall and false redactions.

    .venv/bin/python tests/bench/bench_secrets.py            # our detectors (agent_memory.core.memories.secrets)
    .venv/bin/python tests/bench/bench_secrets.py --verbose  # ... and every miss and false redaction

`tests/fixtures/secrets_corpus.jsonl` holds texts with fake, format-valid secrets in context
(`label: secret`, the values in `secrets`) and look-alikes that must survive (`label: benign`).
A secret counts as caught when its value no longer appears whole in the redacted text; a
redaction is false when it touches no labelled secret (any redaction of a look-alike is false).
When the `detect-secrets` package is installed (`pip install detect-secrets`), its default
plugins are measured the same way beside ours (each line scanned; every value it reports is
replaced).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))

from agent_memory.core.memories.secrets import find_secrets  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "secrets_corpus.jsonl"
Spans = list[tuple[int, int]]


def load() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


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


def measure(records: list[dict], detector: Callable[[str], Spans]) -> dict:
    secrets = caught = redactions = true = 0
    misses: list[str] = []
    false: list[str] = []
    for record in records:
        text, values = record["text"], record["secrets"]
        spans = detector(text)
        redacted = apply(text, spans)
        where = [(text.find(v), text.find(v) + len(v)) for v in values]
        for value in values:
            secrets += 1
            if value in redacted:
                misses.append(f"{record['id']} {record['kind']}: {value[:40]}")
            else:
                caught += 1
        for start, end in spans:
            redactions += 1
            if any(start < e and s < end for s, e in where):
                true += 1
            else:
                false.append(f"{record['id']} {record['kind']}: {text[start:end][:40]!r}")
    return {"secrets": secrets, "caught": caught, "recall": caught / secrets if secrets else 1.0,
            "redactions": redactions, "precision": true / redactions if redactions else 1.0,
            "false_redactions": len(false), "misses": misses, "false": false}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true", help="list every miss and false redaction")
    args = parser.parse_args(argv)
    records = load()
    print(f"corpus: {sum(r['label'] == 'secret' for r in records)} texts with "
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
        if args.verbose:
            for line in result["misses"]:
                print("  missed  ", line)
            for line in result["false"]:
                print("  false   ", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
