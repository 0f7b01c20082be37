"""Which lines of a turn are prose: fenced code blocks, quoted lines (`> ...`), a command's output
(from a prompt line to the next blank line) and lines that look like code, logs or stack traces are
left out; a bullet's marker is dropped. What remains is cut into clauses (`clauses`)."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
# Lines that are code, logs, traces or tool output rather than prose.
_MACHINE = re.compile(
    r"^\s*(\$ |>>>|#!|\d+[:-]\s|at [\w.$<>]+\(|File \"|Traceback|Caused by:|Exception in thread|panic:|"
    r"goroutine \d|---|\+\+\+|@@|[+-]\s{2,}|(INFO|DEBUG|WARN|WARNING|ERROR|FATAL|TRACE)\b|\[\w+\]\s|"
    r"\d{4}-\d\d-\d\d[ T]\d|[A-Z][a-z]{2} \d{1,2} \d\d:\d\d|[{}\[\]<]|"
    r"(def|class|func|fn|public|private|return|import|from|const|let|var|if|for|while)\b.*[(){:;=]\s*$)")
_CODE_CHARS = re.compile(r"[{}();=<>\[\]|\\$]")
_QUOTED = re.compile(r"^\s*>")
_PROMPT = re.compile(r"^\s*(?:\$|>>>|#|PS>|C:\\>)\s")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def prose_lines(text: str) -> list[tuple[int, int, str]]:
    """Spans of prose lines: fenced blocks, quoted lines and machine lines left out."""
    out, fenced, output, at = [], False, False, 0
    for line in text.splitlines(keepends=True):
        start, at = at, at + len(line)
        body = line.rstrip("\r\n")
        if _FENCE.match(body):
            fenced = not fenced
            continue
        output = output and bool(body.strip()) or bool(_PROMPT.match(body))  # a command's output runs to a blank line
        if fenced or output or not body.strip() or _QUOTED.match(body) or _is_machine(body):
            continue
        bullet = _BULLET.match(body)
        lead = bullet.end() if bullet else len(body) - len(body.lstrip())
        out.append((start + lead, start + len(body.rstrip()), "hard"))
    return out


def _is_machine(line: str) -> bool:
    stripped = line.strip()
    if _MACHINE.match(line) or (line[:1] in " \t" and _CODE_CHARS.search(stripped)):
        return True
    code = len(_CODE_CHARS.findall(stripped))
    return code >= 3 and code * 12 > len(stripped)
