"""memory_crud: turns validated arguments into CrudService calls, item by item."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from agent_memory.contracts.crud import (
    ITEM_MODELS,
    MAX_BULK_ITEMS,
    CreateItem,
    CrudFilters,
    MemoryCrudArgs,
    PromoteItem,
    UpdateItem,
)
from agent_memory.contracts.errors import parse_model, storage_failure, to_error_info
from agent_memory.contracts.records import wire_record
from agent_memory.core.commands import Call, EntryChange, NewEntry, Promotion, Removal
from agent_memory.core.crud import CrudService
from agent_memory.core.domains import domain_of
from agent_memory.core.errors import DomainError, InvalidParams, NotFound, item_error
from agent_memory.core.lineage import LineageService, Restoration
from agent_memory.core.models import Access, Entry, Layer, ListFilters, Priority, Scope, Source
from agent_memory.core.read_lists import key_holder_for

WRITE_ACTIONS = {"create", "update", "delete", "unsupersede"}
ITEM_SHAPES = {
    "create": "{content, tags?, priority?, source?, confidence?, layer?, expires_at? | ttl_seconds?, key?, domain?}",
    "read": "{id}",
    "update": "{id, if_match?, content?, tags?, priority?, confidence?, layer?, expires_at?, domain?}",
    "delete": "{id, if_match?}",
    "promote": "{id, target_scope, target_namespace?, layer?}",
    "unsupersede": "{id, if_match?}",
}
KEY_HOLDERS_READ = 100  # the holders of one key a read by key chooses from
UPDATE_FIELDS = tuple(name for name in UpdateItem.model_fields if name not in ("id", "if_match"))


def _payload(items: list[dict[str, Any]], errors: list[dict[str, Any]], next_cursor: str | None = None,
             redacted: int = 0) -> dict[str, Any]:
    """The wire form of `MemoryCrudResult`."""
    return {"items": items, "errors": errors, "next_cursor": next_cursor, "has_more": next_cursor is not None,
            "redacted": redacted}


async def run_memory_crud(crud: CrudService, call: Call, args: MemoryCrudArgs,
                          lineage: LineageService | None = None) -> dict[str, Any]:
    """Returns the result in the shape of `MemoryCrudResult`.

    Raises: DomainError for request-level failures; item failures are returned in `errors`."""
    _check_argument_combination(args)
    call = replace(call, action=args.action)
    scope = Scope(args.scope)
    access = Access.WRITE if args.action in WRITE_ACTIONS else Access.READ
    namespace = await crud.authorize(call, access, scope, args.namespace)
    if args.action == "list":
        page = await crud.list(call, scope, namespace, _list_filters(args), args.cursor, args.limit,
                               subtree=args.subtree)
        return _payload([wire_record(e) for e in page.items], [], page.next_cursor)
    if args.action == "read" and args.filters is not None and args.filters.key is not None:
        return await _read_by_key(crud, call, scope, namespace, args)
    raw_items = _raw_items(args)
    handlers: dict[str, Callable[[Any], Awaitable[Entry]]] = {
        "create": lambda item: crud.create(call, scope, namespace, _new_entry(item, args)),
        "read": lambda item: crud.read(call, scope, namespace, item.id),
        "update": lambda item: crud.update(call, scope, namespace, _change(item, args)),
        "delete": lambda item: crud.delete(call, scope, namespace, Removal(item.id, item.if_match or args.if_match)),
        "promote": lambda item: crud.promote(call, scope, namespace, _promotion(item, args)),
        "unsupersede": lambda item: _unsupersede(lineage, call, scope, namespace, item, args),
    }
    items: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for index, raw in enumerate(raw_items):
        try:
            item = parse_model(ITEM_MODELS[args.action], raw, prefix=f"items[{index}]")
            items.append(wire_record(await handlers[args.action](item)))
        except DomainError as error:
            errors.append(to_error_info(item_error(error, index)).model_dump(mode="json"))
        except Exception as exc:  # storage refusing one item (a full disk) fails that item only
            refused = storage_failure(exc, call.request_id)
            if refused is None:
                raise
            errors.append(to_error_info(item_error(refused, index)).model_dump(mode="json"))
    return _payload(items, errors, redacted=call.redactions.redacted)


async def _read_by_key(crud: CrudService, call: Call, scope: Scope, namespace: str, args: MemoryCrudArgs
                       ) -> dict[str, Any]:
    """`read` with `filters.key`: the entry holding the key here, or a NOT_FOUND item error."""
    if args.items or (args.filters is not None and args.filters.ids is not None):
        raise InvalidParams("read takes items, filters.ids or filters.key: send one of them", field="filters.key")
    key = args.filters.key if args.filters is not None else None
    # One key is held at most once in each slot (the shared one, and each owner's own): of the
    # holders the caller may read, the one the key names for it.
    page = await crud.list(call, scope, namespace, ListFilters(key=key), None, KEY_HOLDERS_READ)
    holder = key_holder_for(call.caller, page.items)
    if holder is not None:
        return _payload([wire_record(holder)], [])
    missing = NotFound(f"no entry holds key {key!r} in {scope.value} namespace {namespace}", key=key)
    return _payload([], [to_error_info(item_error(missing, 0)).model_dump(mode="json")])


async def _unsupersede(lineage: LineageService | None, call: Call, scope: Scope, namespace: str, item: Any,
                       args: MemoryCrudArgs) -> Entry:
    if lineage is None:
        raise InvalidParams("unsupersede is not available here", field="action")
    return await lineage.unsupersede(call, scope, namespace, Restoration(item.id, item.if_match or args.if_match))


def _check_argument_combination(args: MemoryCrudArgs) -> None:
    if args.action == "list":
        if args.items:
            raise InvalidParams("list takes filters, not items: drop items (filters, cursor, limit and subtree "
                                "narrow a list)", field="items")
    elif args.cursor is not None:
        raise InvalidParams("cursor is only for list: drop it", field="cursor")
    elif args.subtree:
        raise InvalidParams("subtree is only for list; drop it, or use action list", field="subtree")
    if args.filters is not None and args.action not in ("list", "read"):
        raise InvalidParams(f"filters are only for list and read: drop them, or put the fields of each entry in "
                            f"items for {args.action}", field="filters")
    if args.if_match is not None:
        if args.action not in ("update", "delete", "unsupersede"):
            raise InvalidParams("if_match is only for update, delete and unsupersede: drop it", field="if_match")
        if len(args.items or []) != 1:
            raise InvalidParams("a top-level if_match applies to a single-item request; set if_match on each item",
                                field="if_match")
        item_etag = (args.items or [{}])[0].get("if_match")
        if item_etag is not None and item_etag != args.if_match:
            raise InvalidParams("the top-level if_match and the item's if_match differ: send one of them",
                                field="if_match")


def _raw_items(args: MemoryCrudArgs) -> list[object]:
    if args.action == "read" and args.filters is not None and args.filters.ids is not None:
        if args.items:
            raise InvalidParams("read takes items or filters.ids, not both: drop one", field="filters.ids")
        return [{"id": entry_id} for entry_id in args.filters.ids]
    if not args.items:
        raise InvalidParams(f"{args.action} needs at least one item: items: [{ITEM_SHAPES[args.action]}] "
                            f"(at most {MAX_BULK_ITEMS})", field="items", limit=MAX_BULK_ITEMS)
    return list(args.items)


def _list_filters(args: MemoryCrudArgs) -> ListFilters:
    f = args.filters or CrudFilters()
    if f.ids is not None:
        raise InvalidParams("filters.ids is only for read: use action read, or drop filters.ids",
                            field="filters.ids")
    if args.layer is not None and f.layer is not None and args.layer != f.layer:
        raise InvalidParams("layer and filters.layer differ: give one of them", field="filters.layer")
    layer = f.layer or args.layer
    return ListFilters(
        layer=Layer(layer) if layer else None,
        tags=tuple(f.tags or ()),
        source=Source(f.source) if f.source else None,
        priority=Priority(f.priority) if f.priority else None,
        owner_agent_id=f.owner_agent_id,
        conflict=f.conflict,
        session_id=f.session_id,
        created_after=f.created_after,
        created_before=f.created_before,
        include_expired=f.include_expired,
        key=f.key,
        domain=domain_of(f.domain, "filters.domain"),
    )


def _new_entry(item: CreateItem, args: MemoryCrudArgs) -> NewEntry:
    layer = item.layer or args.layer
    return NewEntry(
        content=item.content,
        tags=tuple(item.tags or ()),
        priority=Priority(item.priority or "medium"),
        source=Source(item.source or "manual"),
        confidence=item.confidence,
        layer=Layer(layer) if layer else None,
        expires_at=item.expires_at,
        ttl_seconds=item.ttl_seconds,
        key=item.key,
        domain=domain_of(item.domain),
        read_agents=tuple(item.read_agents or ()),
    )


def _change(item: UpdateItem, args: MemoryCrudArgs) -> EntryChange:
    sent = item.model_fields_set - {"id", "if_match"}
    changes: dict[str, object] = {}
    for name in sent:
        value = getattr(item, name)
        if value is None and name not in ("expires_at", "domain", "read_agents"):
            raise InvalidParams(f"{name} cannot be null: leave it out to keep the current value (only expires_at "
                                "and domain take null, to clear them)", field=name)
        if name == "layer":
            value = Layer(value)
        elif name == "priority":
            value = Priority(value)
        elif name == "domain":
            value = domain_of(value)
        changes[name] = value
    if not changes:
        raise InvalidParams(f"update needs at least one field to change besides id and if_match: one of "
                            f"{', '.join(UPDATE_FIELDS)}", field="items", allowed=list(UPDATE_FIELDS))
    return EntryChange(id=item.id, changes=changes, if_match=item.if_match or args.if_match)


def _promotion(item: PromoteItem, args: MemoryCrudArgs) -> Promotion:
    layer = item.layer or args.layer
    return Promotion(
        id=item.id,
        target_scope=Scope(item.target_scope),
        target_namespace=item.target_namespace,
        layer=Layer(layer) if layer else None,
    )

