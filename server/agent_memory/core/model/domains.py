"""Memory domains (seeds/003): what an entry is about, `user_pref`, `system_fact`, `session_summary`,
`agent_eval` or `code_context`, or none. Callers set it on write; the server sets it where it
knows: reflection (a stated preference or standing instruction: user_pref; other facts and
constraints: system_fact), compaction summaries (session_summary) and turns logged with a domain
(the host hooks log a coding session's turns as code_context)."""

from __future__ import annotations

from agent_memory.core.model.errors import InvalidParams
from agent_memory.core.model.models import Domain
from agent_memory.core.model.statements import Insight

DOMAIN_NAMES = tuple(d.value for d in Domain)
_BY_NAME = {d.value: d for d in Domain}


def domain_of(value: object, field: str = "domain") -> Domain | None:
    """The Domain named `value` (None stays None).

    Raises:
        InvalidParams: not one of the domains, naming `field`."""
    if value is None or isinstance(value, Domain):
        return value
    found = _BY_NAME.get(value) if isinstance(value, str) else None
    if found is None:
        raise InvalidParams(f"{field} must be one of {', '.join(DOMAIN_NAMES)} (or null), got {value!r}",
                            field=field, allowed=list(DOMAIN_NAMES))
    return found


def domains_of(values: tuple[object, ...] | list[object], field: str = "domains") -> tuple[Domain, ...]:
    """Distinct Domains, in the order given. Raises: InvalidParams naming `field`."""
    out: list[Domain] = []
    for value in values:
        domain = domain_of(value, field)
        if domain is None:
            raise InvalidParams(f"{field} holds names of domains ({', '.join(DOMAIN_NAMES)}), not null", field=field)
        if domain not in out:
            out.append(domain)
    return tuple(out)


def insight_domain(insight: Insight) -> Domain | None:
    """The domain of a distilled fact or rule: a stated preference (fact) or an instruction (rule)
    is the user's preference; any other fact (decision, profile, supplied, sampled) and a
    constraint is a system fact; a rule the caller supplied or a model sampled stays unclassified."""
    if insight.category in ("preference", "instruction"):
        return Domain.USER_PREF
    if insight.kind == "fact" or insight.category == "constraint":
        return Domain.SYSTEM_FACT
    return None
