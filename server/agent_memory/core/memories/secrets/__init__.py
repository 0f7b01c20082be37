"""Secrets are never stored: find API keys, tokens, passwords, private keys and credentials in
text and replace each with a readable marker, `[REDACTED:<kind>]` (pure; standard library only).

Three kinds of detector, most specific first (a span claimed by one is not claimed again):
1. **Formats** a provider gives its keys (`sk-ant-...`, `ghp_...`, `AKIA...`, `xoxb-...`, JWTs,
   PEM private key blocks, ...; `formats.py`), and tokens a handler checks further (`tokens.py`):
   an AWS secret key beside its key id, a Twilio auth token beside its account SID, a Discord
   bot token whose first part decodes to a user id.
2. **Places** that hold a credential whatever it looks like (`places.py`): the password of a URL,
   `Authorization:` headers, session cookies, `.pgpass`; and passwords on command lines
   (`commands.py`: `sshpass -p`, `redis-cli -a`, `curl -u user:pass`, `mysql -pPW`, `docker login
   -p`, `htpasswd -b`).
3. **Names and words** that say secret (`named.py`): assignments, flags and prose (`password=`,
   `"api_key": "..."`, `--account-key ...`, `my password is ...`, `password hunter2!`), and
   prose with no name beside the value (`prose.py`: `login is dana / PW`, `use PW to log in`, a
   question for a password answered on the next line). A password is judged by what it is not
   (a placeholder, a reference, a type, a word); a key, token or secret by an entropy check.

A value is a placeholder only when it is one whole (`${VAR}`, `<...>`, `changeme`, `xxxx`;
`values.py`). The scan (`scan.py`) is a handful of literal-led searches over the text, never a
pattern tried at every position, so it keeps its speed on long runs and near-matches; large
inputs are redacted off the event loop (`redactor.py`). Measured by `tests/bench/bench_secrets.py`
on `tests/fixtures/secrets_corpus.jsonl` and `tests/fixtures/secrets_blind.jsonl`.
"""

from agent_memory.core.memories.secrets.names import secret_name
from agent_memory.core.memories.secrets.redactor import OFF_LOOP_CHARS, Redactor
from agent_memory.core.memories.secrets.scan import Finding, find_secrets, marker, redact

__all__ = ["OFF_LOOP_CHARS", "Finding", "Redactor", "find_secrets", "marker", "redact", "secret_name"]
