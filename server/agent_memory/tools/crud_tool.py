"""memory_crud: the validated arguments as the application's request, its result on the wire."""

from __future__ import annotations

from typing import Any

from agent_memory.application.memories import ItemsResult, KeyRequest, ListRequest, Memories
from agent_memory.contracts.crud import MemoryCrudArgs
from agent_memory.contracts.crud_requests import crud_request, items_payload, page_payload
from agent_memory.core.model.commands import Call
from agent_memory.core.model.errors import NotFound, item_error


async def run_memory_crud(memories: Memories, call: Call, args: MemoryCrudArgs) -> dict[str, Any]:
    """Returns the result in the shape of `MemoryCrudResult`.

    Raises: DomainError for request-level failures; item failures are returned in `errors`."""
    request = crud_request(args)
    if isinstance(request, ListRequest):
        return page_payload(await memories.list(call, request))
    if isinstance(request, KeyRequest):
        try:
            return items_payload(ItemsResult([await memories.by_key(call, request)], [], 0))
        except NotFound as missing:  # an item error, as for a read of an id that is not there
            return items_payload(ItemsResult([], [item_error(missing, 0)], 0))
    return items_payload(await memories.items(call, request))
