"""agent-memory as the long-term store of a LangGraph graph.

    pip install '.[langgraph]'   # from a clone of agent-memory
    python examples/langgraph_store.py            # a throwaway store in a temporary directory
    python examples/langgraph_store.py --data-dir ~/.local/share/agent-memory

Launches `agent-memory serve` on stdio as the agent `support-bot` (team `helpdesk`) and compiles a
two-node graph with `store=AgentMemoryStore(link)`: `remember` stores what the user said under
("memories", <user>), `recall` searches that namespace by meaning. No model is called. To use a
shared server instead: `MemoryLink.http("http://127.0.0.1:8765/mcp", token)`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import uuid
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent_memory.integrations.langgraph import AgentMemoryStore
from agent_memory.integrations.mcp_link import MemoryLink

IDENTITY = {"agent_id": "support-bot", "system_type": "sys1", "team": "helpdesk"}


class State(TypedDict):
    user: str
    message: str
    recalled: list[str]


def remember(state: State, runtime: Runtime) -> dict:
    if state["message"].lower().startswith("remember:"):
        fact = state["message"].split(":", 1)[1].strip()
        runtime.store.put(("memories", state["user"]), str(uuid.uuid4()), {"fact": fact})
    return {}


def recall(state: State, runtime: Runtime) -> dict:
    found = runtime.store.search(("memories", state["user"]), query=state["message"], limit=2)
    return {"recalled": [f"{item.score:.2f} {item.value['fact']}" for item in found]}


def build(store: AgentMemoryStore):  # noqa: ANN201 - a compiled LangGraph graph
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    return graph.compile(store=store)


def main(data_dir: str) -> None:
    store = AgentMemoryStore(MemoryLink.stdio(IDENTITY, env={**os.environ, "MEMORY_DATA_DIR": data_dir}))
    try:
        app = build(store)
        for message in ("remember: my laptop is a ThinkPad X1 running Fedora",
                        "remember: I work night shifts, call me after 6pm",
                        "Which operating system is on my computer?"):
            result = app.invoke({"user": "dana", "message": message, "recalled": []})
            print(f"{message!r} -> {result['recalled']}")
        print("namespaces:", store.list_namespaces())
    finally:
        store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", help="agent-memory data directory (default: a temporary one)")
    args = parser.parse_args()
    if args.data_dir:
        main(os.path.expanduser(args.data_dir))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(tmp)
