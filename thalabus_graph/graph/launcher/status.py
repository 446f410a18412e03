"""What ``neo4j status`` reports: whether a data dir's server runs, where, and how it is sized."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from thalabus_graph.errors import ConfigurationError
from thalabus_graph.graph.launcher.memory import outgrown_warning, parse_size, store_size
from thalabus_graph.graph.launcher.process import DataDir, port_answers


@dataclass(frozen=True)
class ServerStatus:
    """Whether a data dir's server runs (its lock holder) and where it listens."""

    data_dir: Path
    running: bool
    pid: int | None = None
    port: int | None = None
    uri: str | None = None
    version: str | None = None
    log_file: Path | None = None
    started_at: float | None = None
    answering: bool = False
    """True when the Bolt port accepts a TCP connection right now."""
    auth: bool | None = None
    """True when the server was started with auth (user neo4j); None when unknown."""
    heap: str | None = None
    page_cache: str | None = None
    store_bytes: int | None = None
    """The page cache's share of the store (native store and indexes), in bytes."""
    warnings: tuple[str, ...] = ()
    """Such as: the store has outgrown the page cache."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (paths as strings)."""
        out = asdict(self)
        out["data_dir"] = str(self.data_dir)
        out["log_file"] = str(self.log_file) if self.log_file else None
        return out


def server_status(files: DataDir) -> ServerStatus:
    """The status of the server of ``files``' data dir (its lock holder), and its warnings."""
    pid = files.server_pid()
    if pid is None:
        files.drop_stale_pid_file()
        return ServerStatus(data_dir=files.path, running=False, log_file=files.log_file)
    details = files.details(pid)
    port = details["port"]
    store = store_size(files.path)
    warning = None
    with contextlib.suppress(ConfigurationError):
        if details["page_cache"]:
            warning = outgrown_warning(store, parse_size(details["page_cache"]))
    return ServerStatus(
        data_dir=files.path,
        running=True,
        pid=pid,
        port=port,
        uri=details["uri"],
        version=details["version"],
        log_file=files.log_file,
        started_at=details["started_at"],
        answering=isinstance(port, int) and port_answers(port),
        auth=details["auth"],
        heap=details["heap"],
        page_cache=details["page_cache"],
        store_bytes=store,
        warnings=(warning,) if warning else (),
    )
