#!/usr/bin/env bash
# Example: mint one bearer token per agent of a team for a shared `agent-memory serve --http`.
# Run it where the server runs (same MEMORY_AUTH_SECRET or the same data directory, and the same
# store: each token's id and claims are recorded there, so `agent-memory token list` shows them and
# `agent-memory token revoke ID` or `--agent A` refuses them on every server of that store).
# Each line printed is "agent-id<TAB>token"; hand each agent its own token (ids go to stderr).
set -euo pipefail
TEAM=${TEAM:-platform}
TTL=${TTL:-2592000}   # 30 days
while read -r agent system_type skills; do
  [ -z "$agent" ] && continue
  printf '%s\t%s\n' "$agent" "$(agent-memory token issue --agent-id "$agent" --system-type "$system_type" \
    --team "$TEAM" --skills "$skills" --ttl "$TTL")"
done <<'AGENTS'
planner    sys3 memory_crud,memory_retrieve,memory_reflect
coder-1    sys1 memory_crud,memory_retrieve
coder-2    sys1 memory_crud,memory_retrieve
reviewer   sys2 memory_retrieve
AGENTS
