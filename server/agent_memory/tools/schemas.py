"""Write the JSON Schemas of each tool's input and output: `python -m agent_memory.tools.schemas DIR`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_memory.contracts.crud import MemoryRecord
from agent_memory.contracts.retrieve import RetrievedMemory
from agent_memory.tools.json_schema import published_schema
from agent_memory.tools.server import BUILTIN_TOOLS


def generate() -> dict[str, dict]:
    """File name -> schema, for every built-in tool."""
    files: dict[str, dict] = {}
    for spec in BUILTIN_TOOLS:
        files[f"{spec.name}.input.json"] = published_schema(spec.args_model, fold_nullable=False)
        files[f"{spec.name}.output.json"] = published_schema(spec.result_model, fold_nullable=False)
    files["memory_record.json"] = published_schema(MemoryRecord)
    files["retrieved_memory.json"] = published_schema(RetrievedMemory)
    return files


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    target = Path((argv or sys.argv[1:] or ["schemas"])[0])
    target.mkdir(parents=True, exist_ok=True)
    for name, schema in generate().items():
        (target / name).write_text(render(schema))
        print(f"wrote {target / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
