"""Values a name or a word says are secret, in every form they are written: assignments
(`DB_PASSWORD=...`, `"api_key": "..."`, `password: ...`, `<password>...</password>`, `<add
key="DbPassword" value="..."/>`), flags (`--password ...`, `--account-key ...`), and prose (`my
password is ...`, `password hunter2!`, `pw: ...`, `the db pass is ...`, `login is dana / ...`).

Each family is one literal search for its keyword (`pass`, `token`, `secret`, ...) in the lowered
text, and its expression holds the whole form, so most look-alikes are turned away there; the name
(found backwards from the word) and the value are judged here: a password by what it is not (a
placeholder, a reference, a word), a key, token or secret by the entropy check."""

from __future__ import annotations

import re

from agent_memory.core.memories.secrets.commands import command_of
from agent_memory.core.memories.secrets.names import kind_of, name_class, name_words
from agent_memory.core.memories.secrets.rules import Found, Groups, Handler, Rule, Scan
from agent_memory.core.memories.secrets.values import (
    classes,
    human_secret,
    is_public,
    password_value,
    random_looking,
    trim,
    wordish,
)

_KEYWORDS = r"p(?:ass|w)|s(?:ecret|ess)|token|key|auth|c(?:red|ookie)|bearer"
# The expressions below are tried wherever a keyword occurs, so they are written to fail in few
# steps: a branch whose every arm starts with a character (passed over in one step) rather than
# optional pieces in a row, each a step of its own at every keyword.
_NOT_KEYWORD = r"(?![ \t]*+(?:" + _KEYWORDS + r"))"  # `password=password=...`: another name, no value
# The name's closing quote or bracket (`"password": `, `['password']`), if any.
_CLOSE = r"(?:\\[\"']?\]?|[\"']\]?|\]|)"
# `>`: <password>PW</password>; `:` glued to its value: `Password:PW` in a logged struct; `,`: a call's
# name and value, `define('DB_PASSWORD', 'PW')` (the last two for a password only; see _judge).
_OP = (r"[ \t]*+(?P<op>:=|=>|=(?![=~])" + _NOT_KEYWORD + r"|:(?=[ \t]|\\?[\"']|[a-z0-9])" + _NOT_KEYWORD
       + r"|>(?=[^<\s])|,(?=[ \t]*+[\"']))[ \t]*+")
# Said in prose: `password is ...`, `password for the staging db: ...`, `pass -- ...`, `password now ...`.
_WORD = r"[a-z0-9_-]{1,30}+"
# (The said part is tried only where one of its first letters follows: most places have none.)
_SAID = (r"[ \t]++(?![=:])(?:(?=[icvshfotaw:?=nr-])(?P<said>(?:(?:id|cookie|value|string|hash)(?![a-z0-9_-])[ \t]*+)?"
         r"(?:(?:for|of|on|to|at|in)[ \t]++(?:" + _WORD + r"[ \t]++){0,4}?" + _WORD + r"[ \t]*+)?"
         r"(?::|-{1,2}|\?|(?:is|was|are|=|has[ \t]+been)"
         r"(?:[ \t]++(?:now|still|changed|set|reset|updated|literally|just|actually|simply|currently))?"
         r"(?:[ \t]++to)?(?:[ \t]*+:)?|(?:to|now|(?:set|changed|reset)[ \t]+to)))[ \t]++)?(?!" + _KEYWORDS + r")")


def _tail(least: int, bare: int) -> str:
    """After the keyword: the rest of the name and its closing quote, then (not another keyword) the
    value assigned or said, bare (at least `bare` characters) or quoted (at least `least`). A bare
    value holds something besides letters (`hunter2!`, not `deploy`): a word is turned away here,
    and so is another name (`password: DB_PASS=`, but not base64's padding, `cGFzcw==`); it is read
    in a lookahead, so that the search goes on inside it (`?X-Amz-SignedHeaders=host&X-Amz-Signature=`)."""
    value = (rf"(?:(?=[^\s'\"<>`]{{{bare}}})(?=[a-z]{{0,400}}+[^a-z\s'\"<>`])"
             r"(?!-|[a-z_][a-z0-9_.-]{0,40}+(?::(?:\s|$)|=[ \t]))"
             rf"(?=(?P<bare>[^\s'\"<>`]{{{bare},400}}+))"
             rf"|(?=[bruf]{{0,2}}+[\\\"'`])[bruf]{{0,2}}+"
             rf"(?:\\?\"(?P<dq>(?:[^\"\r\n\\]|\\\r?\n|\\[^\"\r\n]){{{least},400}}+)\\?\""
             rf"|\\?'(?P<sq>[^'\r\n]{{{least},400}}+)'|`(?P<bq>[^`\r\n]{{{least},400}}+)`))")
    # `password=password=...` is turned away at once (the branch below would turn it away too, later).
    return (r"(?P<rest>[a-z0-9_.-]{0,48}+)" + _CLOSE + r"(?![:=](?:" + _KEYWORDS + "))(?:" + _OP + "|" + _SAID + ")"
            + value)


# A password is found by its own families (`pass`, `pw`), at least 4 characters; a key, token or
# secret (even one a person chose) has at least 8 quoted, 10 bare: a shorter value is not tried.
_PASSWORD_TAIL = _tail(4, 4)
_TAIL = _tail(8, 10)
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.$-]{1,64}")  # matched on the reversed text before a keyword
_NAME_SET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.$-")
_CLOSING_TAG = re.compile(r"[ \t]*</")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ANY_DIGIT = re.compile(r"\d")
_ANNOTATION = re.compile(r"[ \t]*(?:\|[ \t]*[A-Za-z_]|=[ \t]*\S|,[ \t]*\*)")  # `x: Type | None = None`
_PASS_VALUE = re.compile(r"[^\w]|(?=.*[a-z])(?=.*[A-Z])(?=.*\d)")  # a symbol, or mixed case and a digit
_ANOTHER_NAME = re.compile(r"[A-Za-z_][\w.-]*[=:]")  # `secret trace_id=...`: another name's value
_PREVIOUS_WORD = re.compile(r"([A-Za-z]{2,20})[ _-]\Z")
_PG_COMMANDS = {"psql", "pg_dump", "pg_dumpall", "pg_restore", "createdb", "dropdb", "vacuumdb", "reindexdb",
                "clusterdb", "pg_basebackup", "createuser", "dropuser", "pg_isready", "pgbench"}
_COOKIE_NAMES = ("sessionid", "phpsessid", "jsessionid", "connect.sid", "asp.net_sessionid")


def _name(text: str, keyword: int, end: int) -> tuple[str, int]:
    """The whole name the keyword at `keyword` is part of (`DB_PASSWORD`, `--account-key`), and where it starts."""
    if keyword == 0 or text[keyword - 1] not in _NAME_SET:
        return text[keyword:end], keyword
    before = _NAME_CHARS.match(text[max(0, keyword - 64):keyword][::-1])
    start = keyword - (before.end() if before else 0)
    return text[start:end], start


def _family(passwords: bool) -> Handler:
    """The handler of a keyword family; a password only in the password families."""
    def handle(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
        found = _judge(scan.text, m.start(), g, passwords)
        if found:
            yield found
    return handle


def _judge(text: str, keyword: int, g: Groups, passwords: bool) -> tuple[str, int, int] | None:
    name, name_start = _name(text, keyword, g.end("rest"))
    group = g.lastgroup or "bare"  # the value's group closes last
    start, end = g.span(group)
    op = g.group("op")
    if op is not None:
        after = end + (group != "bare")  # past a closing quote
        if op == b">" and (name_start == 0 or text[name_start - 1] != "<" or not _CLOSING_TAG.match(text, after)):
            return None  # <password>PW</password>, and nothing else
        if op == b"=" and text[g.end("rest")] == "=" and text[g.end("op")].isspace():
            return None  # `PGPASSWORD= psql ...`: an empty variable, then a command
        if op == b"," and not _call_argument(text, name_start, group):
            return None
        form = "assign"
    elif g.end("said") > g.start("said") >= 0:
        form = "said"
    else:
        form = "flag" if name.startswith("-") else "bare"
    cls = name_class(name)
    if cls is None:  # `the api key is ...`, `secret key for staging is ...`, `api key: ...`
        previous = _PREVIOUS_WORD.search(text, max(0, name_start - 21), name_start)
        if previous:
            name = f"{previous.group(1)} {name}"
            cls = name_class(name)
    if cls is None or form in ("said", "bare") and name.endswith(".") or (cls == "password") != passwords:
        return None  # no secret name, the end of a sentence, or a password seen by another family
    value = text[start:end]
    quoted = group != "bare"
    if not quoted:
        value = trim(value)
    if not value or is_public(value) or form in ("said", "bare") and _ANOTHER_NAME.match(value):
        return None
    if not quoted and _code(text, name, value, g, form, op):
        return None
    normal = _normal(value)
    if normal and len(normal) <= len(name) and normal in _normal(name):
        return None  # `"V1Secret": ".v1_secret"`, `..._ACCESS_TOKEN = "X-Xet-Access-Token"`: the name again
    glued = op == b"," or op == b":" and text[g.end("op")] not in " \t\"'\\"
    if glued and cls != "password":
        return None  # `key:value`, `("token", "x")`: only a password is given so
    if cls == "password":
        if form == "flag" and command_of(text, name_start)[0] in _PG_COMMANDS:
            return None  # psql --password asks; the word after it is the database
        if form == "bare" and name.lower() == "pass" and not _PASS_VALUE.search(value):
            return None  # `pass force_zip64 to ...`: the verb, not the word for a password
        env_style = op == b"=" and form == "assign" and name.isupper() and text[g.end("rest")] == "="
        given = "assign" if form in ("assign", "flag") else form
        # Glued (`Password:PW`, `("password", "PW")`), a word is a label (`t("password", "Kennwort")`).
        ok = password_value(value, given, quoted or env_style) and not (
            glued and (" " in value or not _PASS_VALUE.search(value)))
    elif cls == "sas":
        ok = form == "assign" and name_start > 0 and text[name_start - 1] in "?&" and len(value) >= 20
    elif cls == "session":
        ok = random_looking(value) and (form != "bare" or name.lower().endswith(_COOKIE_NAMES))
    elif form == "bare":  # `token X`: only a value that cannot be a word or a name
        lower, upper, digit, _ = classes(value)
        ok = lower and upper and digit and random_looking(value, 20)
    else:  # a key, token or secret; a secret a person chose (`secret: 'JackalQuokka5!'`) is one too
        ok = random_looking(value) or cls == "secret" and form == "assign" and quoted and human_secret(value)
        if ok and cls == "secret" and _public_half(text, name, name_start):
            return None
    return (kind_of(name, cls), start, start + len(value)) if ok else None


def _call_argument(text: str, name_start: int, group: str) -> bool:
    """`define('DB_PASSWORD', 'PW')`, `setenv("PASSWORD", "PW")`: a quoted name, the first argument
    of a call, and a quoted value after it."""
    before = text[max(0, name_start - 40):name_start].rstrip("'\"")
    return group in ("dq", "sq") and name_start > 0 and text[name_start - 1] in "'\"" and before.rstrip().endswith("(")


def _public_half(text: str, name: str, name_start: int) -> bool:
    """`api_key` beside `api_secret` (Shopify, Cloudinary, Pusher, Twilio's API keys): a key that
    has a secret of its own is the public half of the pair, its id, sent in the clear."""
    words = name_words(name)
    if len(words) < 2 or words[-1] != "key" or words[-2] not in ("api", "app", "consumer") or "secret" in words:
        return False
    sibling = re.compile(r"[-_. ]?".join(map(re.escape, words[:-1])) + r"[-_. ]?secret(?:[-_. ]?key)?[\"']?[ \t]*[:=]",
                         re.I)
    return bool(sibling.search(text, max(0, name_start - 300), name_start + 300))


def _code(text: str, name: str, value: str, g: Groups, form: str, op: bytes | None) -> bool:
    """Whether an unquoted value is code: a variable (`password = proxy_password`, not
    `DB_PASSWORD=...`), or a type (`password: _PasswordType | None = None`)."""
    env_style = op == b"=" and form == "assign" and name.isupper()
    if not env_style and _IDENTIFIER.fullmatch(value) and not _ANY_DIGIT.search(value) and (
            wordish(value) or value.lower().endswith(("password", "passwd", "pass", "secret", "token", "key"))):
        return True
    return op == b":" and bool(_ANNOTATION.match(text, g.start("bare") + len(value)))


def _normal(text: str) -> str:
    return _NOT_ALNUM.sub("", text.lower())


def _xml(scan: Scan, m: re.Match[bytes], g: Groups) -> Found:
    """`<add key="DbPassword" value="..." />`"""
    name = scan.text[g.start("name"):g.end("name")]
    cls = name_class(name)
    value = scan.text[g.start("dq"):g.end("dq")]
    if cls and (password_value(value, "assign", quoted=True) if cls == "password" else random_looking(value)):
        yield kind_of(name, cls), *g.span("dq")


# Each family is one literal search for its keyword; the expression holds the rest of the form.
RULES: tuple[Rule, ...] = (
    Rule("low", "pass", _PASSWORD_TAIL, _family(True), 2),
    Rule("low", "sess", _TAIL, _family(False), 2),
    Rule("low", "pw", _PASSWORD_TAIL, _family(True), 2),
    Rule("low", "secret", _TAIL, _family(False), 2),
    Rule("low", "cred", _TAIL, _family(False), 2),
    Rule("low", "token", _TAIL, _family(False), 2),
    Rule("low", "key", r"=\\?\"(?P<name>[^\"\\]{1,80}+)\\?\"[ \t]++value=\\?\"(?P<dq>[^\"\r\n\\]{1,400}+)\\?\"",
         _xml, 2),
    Rule("low", "key", _TAIL, _family(False), 2),
    Rule("low", "auth", _TAIL, _family(False), 2),
    Rule("low", "sig", _TAIL, _family(False), 2),
)
