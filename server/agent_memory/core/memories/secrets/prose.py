"""Passwords said in prose and chat where no assignment names them: a user and a password given
together (`login is dana / PW`, `creds for staging: etl / PW`), a word given as the password
(`use PW as the password`, `use PW to log in`), and a question for a password answered on the
next line (`what's the wifi pw?` / `[11:37] Ines: PW`). Each value is judged as a password said
in prose (`values.password_value`): never a bare word, a placeholder or a reference."""

from __future__ import annotations

import re

from agent_memory.core.memories.secrets.names import NOT_SECRET
from agent_memory.core.memories.secrets.rules import Found, Groups, Rule, Scan
from agent_memory.core.memories.secrets.values import password_value, trim

# `for the test environment`, `on staging`: what the login is for, before `is`.
_FOR = r"(?:[ \t]++(?:for|of|on|to|at|in)[ \t]++(?:[a-z0-9_-]{1,30}+[ \t]++){0,3}?[a-z0-9_-]{1,30}+)?"
_USER_PASS = (_FOR + r"(?:[ \t]++(?:is|are|was|were|with|as|using))?(?:[ \t]*+[:=][ \t]*+|[ \t]++)"
              r"[a-z_][a-z0-9_.@+\\-]{0,63}+[ \t]*+[/:][ \t]*+"
              r"(?P<v>(?=[a-z]{0,256}+[^a-z\s'\"<>`])[^\s'\"<>`]{4,256}+)")
_USED = re.compile(r"\b(use|used|using|set|try|tried|type|typed|enter|entered|with|it's|is)[ \t]+"
                   r"[`'\"]?([^\s`'\"]{4,200})[`'\"]?[ \t]+(?:as|for)[ \t]+(?:(?:the|my|our|your|a|new|this)[ \t]+)?"
                   r"(?:[\w.-]+[ \t]+){0,2}\Z", re.I)
_USED_TO = re.compile(r"\b(?:use|try|enter|type)[ \t]+[`'\"]?([^\s`'\"]{4,200})[`'\"]?\Z", re.I)  # before ` to `
# A question for a password: the word itself on the line that asks, not a question about passwords
# (`what's the password policy?`).
_ASKS = re.compile(r"\b(?:pass(?:word|wd|phrase|code)?|pw|pwd)\b(?:[ \t]+([a-z]+))?", re.I)
_ABOUT = NOT_SECRET | {"policy", "policies", "rule", "rules", "requirement", "requirements", "change", "manager",
                       "complexity", "rotation", "protected", "less", "auth", "authentication", "login", "spray"}
# A name rather than a password (`use 1Password to log in`, `use Okta to sign in`).
_PRODUCT = re.compile(r"\d*[A-Z]?[a-z]+(?:[A-Z][a-z]+)*")


def _user_pass(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`login is dana / PW`, `creds: etl / PW`"""
    start = g.start("v")
    value = trim(scan.text[start:g.end("v")])
    if password_value(value, "said"):
        yield "password", start, start + len(value)


def _used_as(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`use hunter2 as the password`, `I'm using Pa55word for the db password`: the word before."""
    start = m.start() + 1  # after the blank the lead starts with
    window = scan.text[max(0, start - 100):start]
    if " as " not in window and " for " not in window:
        return
    before = _USED.search(scan.text, max(0, start - 100), start)
    if before and password_value(before.group(2), "said"):
        yield "password", before.start(2), before.end(2)


def _used_to(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`use walrus-gecko-46 to log in`: the word used to log in is the password."""
    start = m.start()
    before = _USED_TO.search(scan.text, max(0, start - 100), start)
    if before and password_value(before.group(1), "said") and not _PRODUCT.fullmatch(before.group(1)):
        yield "password", before.start(1), before.end(1)


def _answer(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`what's the grafana admin pw?` and on the next line, alone (maybe after who said it), the answer."""
    line = scan.text.rfind("\n", max(0, m.start() - 200), m.start()) + 1
    asks = _ASKS.search(scan.text, line, m.start())
    if not asks or (asks.group(1) or "").lower() in _ABOUT:
        return
    start = g.start("v")
    value = trim(scan.text[start:g.end("v")])
    if password_value(value, "said"):
        yield "password", start, start + len(value)


RULES: tuple[Rule, ...] = (
    Rule("low", "cred", r"(?<![a-z0-9_]cred)(?:ential)?s?" + _USER_PASS, _user_pass, 2),
    Rule("low", "login", r"(?<![a-z0-9_]login)s?" + _USER_PASS, _user_pass, 2),
    # (Leads of their own: a branch in the `pass` search would be tried at every `pass`.)
    *(Rule("low", lead, r"(?:word|phrase|wd)(?=[ \t.,;!?)]|\r?\n|$)", _used_as, 2) for lead in (" pass", "\tpass")),
    Rule("low", " to ", r"(?:log|sign)[ \t-]?(?:in|on)(?![a-z])", _used_to, 2),
    # The answer: the next line, after a time (`[11:37]`) and who says it (`Ines:`), is one word.
    Rule("raw", r"\?", r"[ \t]*+\r?\n(?:\[[^\]\r\n]{1,30}+\][ \t]*+)?(?:[A-Za-z][\w .'-]{0,30}?:[ \t]++)?"
                       r"(?P<v>[^\s]{4,64}+)[ \t]*+(?=\r?\n|$)", _answer, 2),
)
