"""The command line: `agent-memory` and its commands (the launcher, the parser and every handler
that parses argv or talks to a person), host setup, and starting the server or the console."""
