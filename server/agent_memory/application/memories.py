"""Memories as `memory_crud` handles them, for every caller: a request's items run one by one
under the permission gate, each item's failure kept beside the others' results."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from agent_memory.application.lineage import Lineage
from agent_memory.core.access.read_lists import key_holder_for
from agent_memory.core.memories.browse import BrowseService
from agent_memory.core.memories.crud import CrudService
from agent_memory.core.memories.lineage import Restoration
from agent_memory.core.memories.reconcile import Choice, Reconciled, reconcile
from agent_memory.core.model.commands import Call, EntryChange, NewEntry, Promotion, Removal
from agent_memory.core.model.cursor import Page
from agent_memory.core.model.errors import DomainError, InvalidParams, NotFound, item_error
from agent_memory.core.model.models import Access, Entry, ListFilters, Scope

T = TypeVar("T")
WRITE_ACTIONS = frozenset({"create", "update", "delete", "unsupersede"})
KEY_HOLDERS_READ = 100  # the holders of one key a read by key chooses from
# What an item of each action is: a read names an entry by its id.
Item = NewEntry | str | EntryChange | Removal | Promotion | Restoration
# Storage that refused work for a reason an operator can act on, as the error to answer (None:
# not such a failure). Supplied by the composition root: the application knows no driver.
StorageFailures = Callable[[BaseException, str], DomainError | None]


@dataclass(frozen=True, slots=True)
class Place:
    """Where a request works: a scope and a namespace (None: the caller's default there)."""

    scope: Scope
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class ItemsRequest:
    """One action on up to `MAX_BULK_ITEMS` items; an item the adapter could not read arrives as
    the error to answer for it (its index is set here)."""

    action: str  # create, read, update, delete, promote or unsupersede
    place: Place
    items: Sequence[Item | DomainError]
    refused: DomainError | None = None  # what is wrong with the request as a whole (see `Memories`)


@dataclass(frozen=True, slots=True)
class ListRequest:
    place: Place
    filters: ListFilters = field(default_factory=ListFilters)
    cursor: str | None = None
    limit: int = 25
    subtree: bool = False
    refused: DomainError | None = None


@dataclass(frozen=True, slots=True)
class KeyRequest:
    """The entry a key names for the caller at a place (`read` with `filters.key`)."""

    place: Place
    key: str
    refused: DomainError | None = None


@dataclass(frozen=True, slots=True)
class ItemsResult:
    entries: list[Entry]  # the items that succeeded, in order
    errors: list[DomainError]  # the items that failed, each with `details.index`
    redacted: int  # secrets replaced before storing


@dataclass(frozen=True, slots=True)
class Conflicts:
    pairs: list[tuple[Entry, Entry | None]]  # (conflict entry, its original or None)
    next_cursor: str | None


class Memories:
    """The gate comes first: a request the caller may not make at its place is refused (and the
    denial audited) before anything about its shape; what an adapter found wrong with the rest of
    it (`refused`) is raised next."""

    def __init__(self, crud: CrudService, lineage: Lineage | None, browse: BrowseService | None,
                 storage_failures: StorageFailures) -> None:
        self._crud = crud
        self._lineage = lineage  # None: unsupersede is not offered
        self._browse = browse  # None: no browsing across areas (the console's)
        self._failures = storage_failures

    async def items(self, call: Call, request: ItemsRequest) -> ItemsResult:
        """Raises: DomainError for the request as a whole (the gate on its namespace); each item's
        failure is in `errors`."""
        call = replace(call, action=request.action)
        access = Access.WRITE if request.action in WRITE_ACTIONS else Access.READ
        scope = request.place.scope
        namespace = await self._crud.authorize(call, access, scope, request.place.namespace)
        if request.refused is not None:
            raise request.refused
        run = self._runner(call, request.action, scope, namespace)
        entries: list[Entry] = []
        errors: list[DomainError] = []
        for index, item in enumerate(request.items):
            try:
                if isinstance(item, DomainError):
                    raise item
                entries.append(await run(item))
            except DomainError as error:
                errors.append(item_error(error, index))
            except Exception as exc:  # a full disk or a busy database refuses this item, not the others
                refused = self._failures(exc, call.request_id)
                if refused is None:
                    raise
                errors.append(item_error(refused, index))
        return ItemsResult(entries, errors, call.redactions.redacted)

    def _runner(self, call: Call, action: str, scope: Scope, namespace: str) -> Callable[[Item], Awaitable[Entry]]:
        crud = self._crud

        async def create(item: Item) -> Entry:
            return await crud.create(call, scope, namespace, _typed(item, NewEntry))

        async def read(item: Item) -> Entry:
            return await crud.read(call, scope, namespace, _typed(item, str))

        async def update(item: Item) -> Entry:
            return await crud.update(call, scope, namespace, _typed(item, EntryChange))

        async def delete(item: Item) -> Entry:
            return await crud.delete(call, scope, namespace, _typed(item, Removal))

        async def promote(item: Item) -> Entry:
            return await crud.promote(call, scope, namespace, _typed(item, Promotion))

        async def unsupersede(item: Item) -> Entry:
            if self._lineage is None:
                raise InvalidParams("unsupersede is not available here", field="action")
            return await self._lineage.unsupersede(call, scope, namespace, _typed(item, Restoration))

        runners = {"create": create, "read": read, "update": update, "delete": delete, "promote": promote,
                   "unsupersede": unsupersede}
        if action not in runners:
            raise InvalidParams(f"unknown action {action!r}", field="action", allowed=sorted(runners))
        return runners[action]

    async def list(self, call: Call, request: ListRequest) -> Page:
        """Raises: DomainError (the gate, a malformed filter or cursor)."""
        call = replace(call, action="list")
        scope = request.place.scope
        namespace = await self._crud.authorize(call, Access.READ, scope, request.place.namespace)
        if request.refused is not None:
            raise request.refused
        return await self._crud.list(call, scope, namespace, request.filters, request.cursor, request.limit,
                                     subtree=request.subtree)

    async def by_key(self, call: Call, request: KeyRequest) -> Entry:
        """The entry the key names for the caller at its place (as a keyed create would update it).

        Raises: NotFound (no entry it may read holds the key), DomainError (the gate)."""
        call = replace(call, action="read")
        place = request.place
        namespace = await self._crud.authorize(call, Access.READ, place.scope, place.namespace)
        if request.refused is not None:
            raise request.refused
        page = await self._crud.list(call, place.scope, namespace, ListFilters(key=request.key), None,
                                     KEY_HOLDERS_READ)
        holder = key_holder_for(call.caller, page.items)
        if holder is None:
            raise NotFound(f"no entry holds key {request.key!r} in {place.scope.value} namespace {namespace}",
                           key=request.key)
        return holder

    async def by_id(self, call: Call, entry_id: str) -> Entry:
        """One entry by id alone, wherever the caller may read it (anything else: NotFound)."""
        return await self._crud.read_by_id(replace(call, action="read"), entry_id)

    async def one(self, call: Call, action: str, item: Item) -> Entry:
        """One item of `action` on the entry `item` names, found by its id where the caller may
        read it (the console's edit, delete and undo of one entry).

        Raises: DomainError (the item's failure, or the entry not found)."""
        entry_id = item if isinstance(item, str) else getattr(item, "id", "")
        found = await self.by_id(call, entry_id)
        done = await self.items(call, ItemsRequest(action, Place(found.scope, found.namespace), [item]))
        if done.errors:
            error = done.errors[0]
            error.details.pop("index", None)  # one entry, not an item of a bulk request
            raise error
        return done.entries[0]

    async def browse(self, call: Call, *, scopes: tuple[Scope, ...] = (), namespace: str | None = None,
                     filters: ListFilters | None = None, superseded: bool | None = None, cursor: str | None = None,
                     limit: int = 25) -> Page:
        """Everything the caller may read across areas, newest first (the console's list)."""
        if self._browse is None:
            raise InvalidParams("browsing is not available here", field="action")
        return await self._browse.browse(replace(call, action="list"), scopes=scopes, namespace=namespace,
                                         filters=filters, superseded=superseded, cursor=cursor, limit=limit)

    async def conflicts(self, call: Call, cursor: str | None, limit: int) -> Conflicts:
        """Pending conflict entries the caller may read, each beside its original (None when that
        is gone: deleted or expired)."""
        page = await self.browse(call, filters=ListFilters(conflict=True), cursor=cursor, limit=limit)
        pairs: list[tuple[Entry, Entry | None]] = []
        for pending in page.items:
            original = None
            if pending.conflict_of is not None:
                try:
                    original = await self._crud.read(replace(call, action="read"), pending.scope, pending.namespace,
                                                     pending.conflict_of)
                except DomainError:
                    original = None
            pairs.append((pending, original))
        return Conflicts(pairs, page.next_cursor)

    async def reconcile(self, call: Call, conflict_id: str, choice: Choice, *, original_etag: str,
                        merged_content: str | None = None) -> Reconciled:
        """Resolve a conflict entry against its original (`core.memories.reconcile`)."""
        return await reconcile(self._crud, call, conflict_id, choice, original_etag=original_etag,
                               merged_content=merged_content)


def _typed(item: Item, kind: type[T]) -> T:
    if not isinstance(item, kind):  # an adapter's mistake, never a caller's
        raise TypeError(f"expected {kind.__name__}, got {type(item).__name__}")
    return item
