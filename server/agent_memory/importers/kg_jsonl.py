"""`--from kg-jsonl`: the JSONL file of the reference knowledge-graph memory server
(`@modelcontextprotocol/server-memory`, its `memory.jsonl`).

Its lines are `{"type": "entity", "name", "entityType", "observations": [...]}` and
`{"type": "relation", "from", "to", "relationType"}`. Each observation becomes one entry,
`<name> (<entityType>): <observation>`, tagged `entity:<name>` and `type:<entityType>`; an entity
without observations becomes `<name> (<entityType>)`. Each relation becomes one readable entry,
`<from> (<type>) <relationType> <to> (<type>)`, tagged `relation:<relationType>`, `entity:<from>`
and `entity:<to>`. The file has no dates: the entries are dated at import. Identity: the entity
name and the observation text (a relation: its three parts), so the order of lines does not matter.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from agent_memory.importers.drafts import Bad, Draft, json_lines, tag_list


def _text(record: dict, name: str) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{record.get('type')} needs a non-empty string \"{name}\"")
    return value.strip()


def _entity(record: dict, where: str) -> list[Draft]:
    name, kind = _text(record, "name"), _text(record, "entityType")
    seen = record.get("observations", [])
    if not isinstance(seen, list) or not all(isinstance(item, str) for item in seen):
        raise ValueError("entity observations must be a list of strings")
    tags = tag_list([f"entity:{name}", f"type:{kind}"])
    if not any(item.strip() for item in seen):
        return [Draft(where=where, key=f"entity\0{name}", content=f"{name} ({kind})", tags=tags)]
    return [Draft(where=where, key=f"entity\0{name}\0{item.strip()}", content=f"{name} ({kind}): {item.strip()}",
                  tags=tags) for item in seen if item.strip()]


def _relation(record: dict, where: str, kinds: dict[str, str]) -> Draft:
    source, target, verb = _text(record, "from"), _text(record, "to"), _text(record, "relationType")

    def named(entity: str) -> str:
        return f"{entity} ({kinds[entity]})" if entity in kinds else entity

    return Draft(where=where, key=f"relation\0{source}\0{verb}\0{target}",
                 content=f"{named(source)} {verb} {named(target)}",
                 tags=tag_list([f"relation:{verb}", f"entity:{source}", f"entity:{target}"]))


def read_kg_jsonl(lines: Iterable[str]) -> Iterator[Draft | Bad]:
    records: list[tuple[str, object]] = [(f"line {number}", value) for number, value in json_lines(lines)]
    kinds = {value["name"].strip(): value["entityType"].strip() for _, value in records
             if isinstance(value, dict) and value.get("type") == "entity"
             and isinstance(value.get("name"), str) and isinstance(value.get("entityType"), str)}
    for where, value in records:
        if isinstance(value, Bad):
            yield value
            continue
        try:
            if not isinstance(value, dict):
                raise ValueError("not a JSON object")
            if value.get("type") == "entity":
                yield from _entity(value, where)
            elif value.get("type") == "relation":
                yield _relation(value, where, kinds)
            else:
                raise ValueError(f"type must be \"entity\" or \"relation\", got {value.get('type')!r}")
        except ValueError as exc:
            yield Bad(where, str(exc))
