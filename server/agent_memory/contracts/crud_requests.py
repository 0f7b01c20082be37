"""`memory_crud` between its wire form and the application's typed requests and results: the
arguments (already validated as `MemoryCrudArgs`) as an `ItemsRequest`, a `ListRequest` or a read
by key, and what comes back in the shape of `MemoryCrudResult`."""

from __future__ import annotations

from typing import Any

from agent_memory.application.memories import Item, ItemsRequest, ItemsResult, KeyRequest, ListRequest, Place
from agent_memory.contracts.crud import (
    ITEM_MODELS,
    MAX_BULK_ITEMS,
    CreateItem,
    CrudFilters,
    MemoryCrudArgs,
    PromoteItem,
    UpdateItem,
)
from agent_memory.contracts.errors import parse_model, to_error_info
from agent_memory.contracts.records import wire_record
from agent_memory.core.memories.lineage import Restoration
from agent_memory.core.model.commands import EntryChange, NewEntry, Promotion, Removal
from agent_memory.core.model.cursor import Page
from agent_memory.core.model.domains import domain_of
from agent_memory.core.model.errors import DomainError, InvalidParams
from agent_memory.core.model.models import Entry, Layer, ListFilters, Priority, Scope, Source

ITEM_SHAPES = {
    "create": "{content, tags?, priority?, source?, confidence?, layer?, expires_at? | ttl_seconds?, key?, domain?}",
    "read": "{id}",
    "update": "{id, if_match?, content?, tags?, priority?, confidence?, layer?, expires_at?, domain?}",
    "delete": "{id, if_match?}",
    "promote": "{id, target_scope, target_namespace?, layer?}",
    "unsupersede": "{id, if_match?}",
}
UPDATE_FIELDS = tuple(name for name in UpdateItem.model_fields if name not in ("id", "if_match"))


def crud_request(args: MemoryCrudArgs) -> ItemsRequest | ListRequest | KeyRequest:
    """Raises: InvalidParams for arguments that do not go together. What else is wrong is carried
    for the application to raise after the permission gate (`refused`), and an item that cannot
    be read is the error in its place in `items`."""
    _check_argument_combination(args)
    place = Place(Scope(args.scope), args.namespace)
    if args.action == "list":
        try:
            return ListRequest(place, _list_filters(args), args.cursor, args.limit, args.subtree)
        except DomainError as refused:
            return ListRequest(place, refused=refused)
    if args.action == "read" and args.filters is not None and args.filters.key is not None:
        refused = None
        if args.items or args.filters.ids is not None:
            refused = InvalidParams("read takes items, filters.ids or filters.key: send one of them",
                                    field="filters.key")
        return KeyRequest(place, args.filters.key, refused)
    try:
        raw_items = _raw_items(args)
    except DomainError as refused:
        return ItemsRequest(args.action, place, [], refused)
    return ItemsRequest(args.action, place, [_item(args, raw, index) for index, raw in enumerate(raw_items)])


def items_payload(result: ItemsResult, next_cursor: str | None = None) -> dict[str, Any]:
    """The wire form of `MemoryCrudResult`."""
    return {"items": [wire_record(e) for e in result.entries],
            "errors": [to_error_info(e).model_dump(mode="json") for e in result.errors],
            "next_cursor": next_cursor, "has_more": next_cursor is not None, "redacted": result.redacted}


def page_payload(page: Page) -> dict[str, Any]:
    return items_payload(ItemsResult(page.items, [], 0), page.next_cursor)


def one_payload(entry: Entry) -> dict[str, Any]:
    return items_payload(ItemsResult([entry], [], 0))


def _item(args: MemoryCrudArgs, raw: object, index: int) -> Item | DomainError:
    try:
        item = parse_model(ITEM_MODELS[args.action], raw, prefix=f"items[{index}]")
        if args.action == "create":
            return _new_entry(item, args)
        if args.action == "read":
            return str(item.id)
        if args.action == "update":
            return _change(item, args)
        if args.action == "delete":
            return Removal(item.id, item.if_match or args.if_match)
        if args.action == "promote":
            return _promotion(item, args)
        return Restoration(item.id, item.if_match or args.if_match)
    except DomainError as error:
        return error


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


def entry_change(item: UpdateItem, if_match: str | None = None) -> EntryChange:
    """An update item as the change it asks for (only the fields it sent)."""
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
    return EntryChange(id=item.id, changes=changes, if_match=item.if_match or if_match)


def _change(item: UpdateItem, args: MemoryCrudArgs) -> EntryChange:
    return entry_change(item, args.if_match)


def _promotion(item: PromoteItem, args: MemoryCrudArgs) -> Promotion:
    layer = item.layer or args.layer
    return Promotion(
        id=item.id,
        target_scope=Scope(item.target_scope),
        target_namespace=item.target_namespace,
        layer=Layer(layer) if layer else None,
    )
