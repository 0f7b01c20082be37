"""Passwords on command lines: an option that takes one (`sshpass -p`, `redis-cli -a`, `curl -u
user:pass`, `mysql -pPW`, `docker login -p`, `openssl -passin pass:`, `echo PW | sudo -S`), and the
arguments of `htpasswd -b`, `sqlplus user/PW@db`, `rabbitmqctl add_user`, `xfreerdp /p:`; each
judged by the command it belongs to."""

from __future__ import annotations

import re
from collections.abc import Iterator

from agent_memory.core.memories.secrets.places import cookie_pairs
from agent_memory.core.memories.secrets.rules import Found, Groups, Rule, Scan
from agent_memory.core.memories.secrets.values import password_value, trim

_SHELL_WORD = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)""")
_PREFIXES = {"$", "#", ">", "%", "sudo", "time", "env", "exec", "nohup", "!", "command", "npx", "uvx"}
_MYSQL = {"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mariadb", "mariadb-dump"}
_MONGO = {"mongo", "mongosh", "mongodump", "mongorestore", "mongoimport", "mongoexport", "mongostat"}
_LOGIN = {"docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras", "crane", "az", "cf", "ibmcloud"}
_COMMANDS = {  # option -> commands where it takes a password (or user:password)
    b"p": _MYSQL | _MONGO | {"sshpass", "ncftp", "mosquitto_pub", "mosquitto_sub"},
    b"a": {"redis-cli", "keydb-cli", "valkey-cli"},
    b"P": {"sqlcmd", "bcp", "osql", "isql"},
    b"w": {"ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare"},
    b"u": {"curl", "lftp"},
    b"U": {"smbclient", "rpcclient", "smbmap"},
    b"b": {"curl"},
}


def command_of(text: str, at: int) -> tuple[str, list[str]]:
    """The command of the shell segment holding position `at` (after the last `|`, `&&`, `;` or
    newline within 2000 characters), and its first words (a prefix, `sudo`, `env X=1`, skipped)."""
    low = max(0, at - 2000)
    amp = text.rfind("&", low, at)  # one `&` is found at once; `&&` is looked for only then
    both = text.rfind("&&", low, amp + 1) if amp > low else -1
    start = max(low, text.rfind("|", low, at) + 1, text.rfind(";", low, at) + 1, text.rfind("\n", low, at) + 1,
                both + 2 if both >= 0 else 0)
    words: list[str] = []
    command = -1
    for word in _SHELL_WORD.finditer(text, start, at):  # the command and its first few arguments
        words.append(word.group(1) or word.group(2) or word.group(3) or "")  # `''` is an empty word
        if command < 0 and not ("=" in words[-1] and not words[-1].startswith("-") or words[-1] in _PREFIXES):
            command = len(words) - 1
        if command >= 0 and len(words) > command + 4:
            break
    if command < 0:  # only prefixes: the last of them stands for the command
        command = max(0, len(words) - 1)
    words = words[command:]
    return (words[0].rsplit("/", 1)[-1] if words else ""), words


def _unquote(text: str, start: int, end: int) -> tuple[int, int]:
    """The span inside a pair of quotes around `text[start:end]`, else the span trimmed."""
    value = text[start:end]
    if len(value) >= 2 and value[0] in "'\"":
        close = value.find(value[0], 1)
        if close > 0:
            return start + 1, start + close
    return start, start + len(trim(value))


def _password_at(text: str, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    start, end = _unquote(text, start, end)
    if password_value(text[start:end], "assign", quoted=True):
        yield "password", start, end


def _option(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    text = scan.text
    command, words = command_of(text, m.start())
    if g.start("ossl") >= 0:
        yield from _password_at(text, *g.span("ossl"))
        return
    if g.start("sudo") >= 0:
        if command == "sudo":
            yield from _echoed(text, m.start())
        return
    opt = g.group("opt") or b"u"
    if command not in _COMMANDS.get(opt, ()) and not (opt == b"p" and command in _LOGIN and "login" in words):
        return
    group = "user" if g.start("user") >= 0 else "glued" if g.start("glued") >= 0 else "spaced"
    if g.start(group) < 0:
        return
    start, end = _unquote(text, *g.span(group))
    if opt == b"p" and command in _MYSQL and group != "glued":
        return  # mysql -p alone asks; the word after it is the database
    if opt == b"b":
        yield from cookie_pairs(text, start - 1, end)
    elif opt in (b"u", b"U"):
        value = text[start:end]
        cut = max(value.find(":"), value.find("%") if opt == b"U" else -1, value.find(",") if command == "lftp" else -1)
        if cut > 0:
            yield from _password_at(text, start + cut + 1, end)
    else:
        yield from _password_at(text, start, end)


def _echoed(text: str, at: int) -> Found:
    """`echo 'PW' | sudo -S ...`: the echoed word."""
    line_start = text.rfind("\n", max(0, at - 2000), at) + 1
    m = re.search(r"\becho[ \t]+(?:-n[ \t]+)?('[^']{1,256}'|\"[^\"]{1,256}\"|\S{1,256})[ \t]*\|[^|]*$",
                  text[max(line_start, at - 2000):at])
    if m:
        base = max(line_start, at - 2000)
        yield from _password_at(text, base + m.start(1), base + m.end(1))


def _rdp(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    if "rdp" in command_of(scan.text, m.start())[0]:
        yield from _password_at(scan.text, *g.span("v"))


def _htpasswd(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`htpasswd -b[c] FILE USER PASSWORD` (`-n`: no file)."""
    flags = scan.text[g.start("flags"):g.end("flags")]  # in case: -B is bcrypt, -b batch
    if "b" not in flags:
        return
    base = g.start("args")
    args = list(re.finditer(r"\S+", scan.text[base:g.end("args")]))
    if "C" in flags and args and args[0].group().isdigit():
        args = args[1:]  # -C takes the bcrypt cost
    need = 2 if "n" in flags else 3
    if len(args) >= need:
        yield from _password_at(scan.text, base + args[need - 1].start(), base + args[need - 1].end())


def _positional(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`sqlplus user/PW@db`, `rabbitmqctl add_user user PW`."""
    yield from _password_at(scan.text, *g.span("v"))


RULES: tuple[Rule, ...] = (
    # An option after a blank (`-p`, `--user`); its value is read in a lookahead, so the search goes on
    # inside it (`-p pypi-...`).
    *(Rule("raw", lead, r"(?:pass(?:in|out)?[ \t]++pass:(?=(?P<ossl>[^\s]{4,256}+))|S(?P<sudo>[ \t])"
                        r"|(?P<opt>[paPwuUb])(?=[ \t]++(?P<spaced>[^\s-][^\s]{3,4000}+)|(?P<glued>[^\s-][^\s]{3,255}+))"
                        r"|-user(?:=|[ \t]++)(?=(?P<user>[^\s]{4,512}+)))", _option, 1) for lead in (" -", "\t-")),
    Rule("raw", "/p:", r"(?<=\s/p:)(?P<v>[^\s]{1,256}+)", _rdp, 1),
    Rule("low", "sqlplus", r"(?:[ \t]++-[a-z]++)*+[ \t]++[^\s/@'\"]{1,64}+/(?P<v>[^\s@/]{4,256}+)@", _positional, 1),
    Rule("low", "rabbitmqctl", r"(?:[ \t]++-[a-z-]++(?:[ \t]++[^\s-]\S*+)?)*+[ \t]++(?:add_user|change_password)"
                               r"[ \t]++\S{1,128}+[ \t]++(?P<v>[^\s-]\S{3,255}+)", _positional, 1),
    Rule("low", "htpasswd", r"(?P<flags>(?:[ \t]++-[a-z]{1,8}+)+)"
                        r"(?P<args>(?:[ \t]++[^\s-][^\s]{0,511}+){2,4})", _htpasswd, 1),
)
