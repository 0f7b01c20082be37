"""Reconciling a conflict entry (SPEC section 6.1): update the original with its current etag,
then delete the conflict entry. Both steps go through `CrudService`, so the gate and the audit are
those of `memory_crud update` and `delete`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from agent_memory.core.memories.crud import CrudService
from agent_memory.core.model.commands import Call, EntryChange, Removal
from agent_memory.core.model.errors import Conflict, InvalidParams
from agent_memory.core.model.models import Entry


class Choice(StrEnum):
    KEEP_ORIGINAL = "keep_original"  # the original stays as it is; the conflict entry is deleted
    TAKE_THIS = "take_this"  # the original takes the conflict entry's fields
    MERGE = "merge"  # the original takes content written by the person reconciling


@dataclass(frozen=True, slots=True)
class Reconciled:
    original: Entry
    removed_conflict_id: str


async def reconcile(crud: CrudService, call: Call, conflict_id: str, choice: Choice, *,
                    original_etag: str, merged_content: str | None = None) -> Reconciled:
    """Resolve conflict entry `conflict_id` against its original.

    Args:
        original_etag: the original's etag as the person reconciling saw it; a stale one is
            `CONFLICT` and nothing changes (nor is a new conflict entry left behind).
        merged_content: the text for `Choice.MERGE`.

    Raises:
        InvalidParams: not a conflict entry, or MERGE without content.
        NotFound / Forbidden: as `memory_crud read`, `update` and `delete`.
        Conflict: the original changed since `original_etag`.
    """
    conflict = await crud.read_by_id(replace(call, action="read"), conflict_id)
    if not conflict.conflict or conflict.conflict_of is None:
        raise InvalidParams(f"{conflict_id} is not a conflict entry", field="id")
    original = await crud.read(replace(call, action="read"), conflict.scope, conflict.namespace, conflict.conflict_of)
    if original.etag != original_etag:
        raise Conflict(f"{original.id} changed since you looked at it; review the conflict again",
                       current_etag=original.etag, current_version=original.version)
    if choice is Choice.MERGE and not (merged_content or "").strip():
        raise InvalidParams("merge needs the merged content", field="content")
    if choice is Choice.TAKE_THIS:
        changes: dict[str, object] = {"content": conflict.content, "tags": list(conflict.tags),
                                      "priority": conflict.priority, "confidence": conflict.confidence,
                                      "layer": conflict.layer}
    elif choice is Choice.MERGE:
        changes = {"content": merged_content}
    else:
        changes = {}
    if changes:
        original = await crud.update(replace(call, action="update"), original.scope, original.namespace,
                                     EntryChange(original.id, changes, if_match=original_etag))
    await crud.delete(replace(call, action="delete"), conflict.scope, conflict.namespace,
                      Removal(conflict.id, if_match=conflict.etag))
    return Reconciled(original=original, removed_conflict_id=conflict.id)
