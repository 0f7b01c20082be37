"""The memory console: a small web UI at /console/ over the same services, permission gate and
audit as the MCP tools (`console.api`), signed in with a bearer token (`console.auth`)."""
