"""structlog to stderr only (stdout belongs to the MCP protocol on stdio), plus WARNING and ERROR
lines copied as JSON to a rotating file in the data directory, for `agent-memory warnings`."""

from __future__ import annotations

import contextlib
import json
import logging
import logging.handlers
import sys
from pathlib import Path
from typing import Any

import structlog

from agent_memory.storage.files import private_dir

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
LOG_FILE = "agent-memory.log"
LOG_FILE_BYTES = 1_000_000
LOG_FILE_BACKUPS = 3
_file_logger = logging.getLogger("agent_memory.warnings_file")
_file_logger.propagate = False


class _KeptLogFile(logging.handlers.RotatingFileHandler):
    """The warnings file is a copy: when it cannot be written (a full disk) the line is dropped
    quietly (it is on stderr anyway), never a "Logging error" traceback."""

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        with contextlib.suppress(Exception):
            if self.stream is not None:
                self.stream.close()
        self.stream = None  # type: ignore[assignment]  # reopened at the next line


def _copy_warnings(_: Any, __: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    if _file_logger.handlers and event_dict.get("level") in ("warning", "error", "critical"):
        _file_logger.warning(json.dumps(event_dict, default=str, ensure_ascii=False))
    return event_dict


def configure_logging(level: str = "info", fmt: str = "auto", log_dir: Path | None = None) -> None:
    """Route structlog and the standard library's logging (the MCP SDK's) to stderr; with
    `log_dir`, also keep warnings and errors in `<log_dir>/agent-memory.log` (rotated at 1 MB,
    3 old files kept)."""
    numeric = _LEVELS[level]
    as_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    for old in _file_logger.handlers[:]:
        _file_logger.removeHandler(old)
        old.close()
    file_handler: logging.Handler | None = None
    if log_dir is not None:
        try:
            private_dir(log_dir)  # and the data directory above it: 0700 when made here
            file_handler = _KeptLogFile(
                log_dir / LOG_FILE, maxBytes=LOG_FILE_BYTES, backupCount=LOG_FILE_BACKUPS, encoding="utf-8")
        except OSError:
            file_handler = None  # an unwritable data directory must not stop the server
    if file_handler is not None:
        file_handler.setFormatter(logging.Formatter("%(message)s"))
        _file_logger.addHandler(file_handler)
        _file_logger.setLevel(logging.WARNING)
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, _copy_warnings, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _copy_warnings, renderer],
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(numeric, logging.WARNING))
