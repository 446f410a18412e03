"""The scale benchmark's server: the CLI's default Neo4j, its idle wait, its index files.

The figures a user gets come from the server ``thalabus-graph neo4j start --data DIR`` gives
with no size flags, so ``cli_server`` starts exactly that command (in a subprocess, with
``THALABUS_NEO4J_HEAP`` / ``THALABUS_NEO4J_PAGE_CACHE`` removed from its environment so that
only the launcher's sizing rule decides) and stops it with ``neo4j stop --data DIR``.

After a bulk ingest the server keeps working (Lucene merges of the new index segments), so
the benchmark times the queries twice: right after ``ingest`` returns, and once the server
is idle. ``wait_idle`` decides "idle" from the JVM's own CPU time: read from
``/proc/<pid>/stat`` when the server's pid is known (the benchmark started it, or
``--server-data`` names its data dir), else from the JVM's ``OperatingSystem`` bean through
``dbms.queryJmx``; other processes on the machine do not count.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from thalabus_graph.graph.database import Database

CLI_MAIN = "import sys; from thalabus_graph.cli import main; sys.exit(main(sys.argv[1:]))"
SIZE_ENV = ("THALABUS_NEO4J_HEAP", "THALABUS_NEO4J_PAGE_CACHE")
IDLE_CORES = 0.10
"""Below this CPU use (cores, averaged over a one-second sample) the JVM counts as idle."""
IDLE_WINDOW_S = 10.0
"""Seconds the JVM must stay idle in a row."""
LUCENE_PROVIDERS = ("vector", "fulltext")


@dataclass
class ServerInfo:
    """The server the benchmark runs on and how it was sized."""

    uri: str
    started_by: str
    """``cli`` (``thalabus-graph neo4j start`` by the benchmark) or ``uri`` (given)."""
    data_dir: Path | None = None
    pid: int | None = None
    version: str | None = None
    heap: str | None = None
    page_cache: str | None = None
    start_argv: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view."""
        out = asdict(self)
        out["data_dir"] = str(self.data_dir) if self.data_dir else None
        return out


def cli_argv(*args: str) -> list[str]:
    """``thalabus-graph ARGS`` run by this interpreter (the checkout's own package)."""
    return [sys.executable, "-c", CLI_MAIN, *args]


def _cli_json(args: list[str], timeout: float) -> dict[str, Any]:
    """Run a ``thalabus-graph ... --json`` command; its JSON, or a clear exit."""
    env = {k: v for k, v in os.environ.items() if k not in SIZE_ENV}
    proc = subprocess.run(cli_argv(*args), capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)
    out = proc.stdout.strip()
    if proc.returncode != 0 or not out:
        raise SystemExit(f"thalabus-graph {' '.join(args)} failed (rc {proc.returncode}): "
                         f"{proc.stderr.strip()[-2000:]}")
    data: dict[str, Any] = json.loads(out)  # one JSON document, on one line or indented
    return data


def status(data_dir: Path) -> dict[str, Any]:
    """``thalabus-graph neo4j status --data DIR --json`` (a clear exit when none runs)."""
    return _cli_json(["neo4j", "status", "--data", str(data_dir), "--json"], 60)


@contextlib.contextmanager
def cli_server(args: Any, say: Callable[[str], None]) -> Iterator[ServerInfo]:
    """``--uri`` (with ``--server-data`` for its pid and sizes), else the CLI's default server
    on a temporary data dir, stopped and removed at the end unless ``--keep``."""
    if args.uri:
        info = ServerInfo(uri=args.uri, started_by="uri")
        if args.server_data:
            state = status(Path(args.server_data))
            info = ServerInfo(uri=args.uri, started_by="uri", data_dir=Path(args.server_data),
                              pid=state.get("pid"), version=state.get("version"),
                              heap=state.get("heap"), page_cache=state.get("page_cache"))
        yield info
        return
    tmp = Path(tempfile.mkdtemp(prefix="thalabus-scale-"))
    argv = ["neo4j", "start", "--data", str(tmp)]
    for flag, value in (("--heap", args.heap), ("--page-cache", args.page_cache),
                        ("--neo4j-version", getattr(args, "neo4j_version", None))):
        if value:
            argv += [flag, value]
    say(f"starting: thalabus-graph {' '.join(argv)} ...")
    state = _cli_json([*argv, "--json"], 900)
    info = ServerInfo(uri=str(state["uri"]), started_by="cli", data_dir=tmp,
                      pid=state.get("pid"), version=state.get("version"),
                      heap=state.get("heap"), page_cache=state.get("page_cache"),
                      start_argv=["thalabus-graph", *argv])
    say(f"server {info.uri}: Neo4j {info.version}, heap {info.heap}, "
        f"page cache {info.page_cache} (pid {info.pid})")
    try:
        yield info
    finally:
        if args.keep:
            say(f"kept: {info.uri} on {tmp}; rerun with --uri {info.uri} --server-data {tmp}; "
                f"stop with `thalabus-graph neo4j stop --data {tmp}`")
        else:
            _cli_json(["neo4j", "stop", "--data", str(tmp), "--json"], 120)
            subprocess.run(["rm", "-rf", str(tmp)], check=False)


# --- CPU time and the idle wait ------------------------------------------------------------
def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc/<pid>/stat``)."""
    raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    fields = raw[raw.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def jmx(db: Database, query: str, run: Callable[..., list[dict[str, Any]]]
        ) -> list[dict[str, Any]]:
    """The beans ``dbms.queryJmx(query)`` gives: name and attribute values."""
    rows = run(db, "scale_jmx", pattern=query)
    return [{"name": r["name"],
             "attributes": {k: (v.get("value") if isinstance(v, dict) else v)
                            for k, v in (r["attributes"] or {}).items()}} for r in rows]


def cpu_meter(info: ServerInfo, db: Database, run: Callable[..., list[dict[str, Any]]]
              ) -> tuple[str, Callable[[], float]]:
    """Where the JVM's CPU seconds come from, and a function reading them."""
    if info.pid is not None and Path(f"/proc/{info.pid}/stat").exists():
        pid = info.pid
        return f"/proc/{pid}/stat", lambda: proc_cpu_seconds(pid)

    def from_jmx() -> float:
        beans = jmx(db, "java.lang:type=OperatingSystem", run)
        return float(beans[0]["attributes"]["ProcessCpuTime"]) / 1e9

    return "dbms.queryJmx ProcessCpuTime", from_jmx


@dataclass
class IdleWait:
    """How the wait for an idle server went."""

    seconds: float
    idle: bool
    """False: ``timeout`` passed first."""
    cores_by_second: list[float]


def wait_idle(cpu_seconds: Callable[[], float], *, timeout: float,
              window: float = IDLE_WINDOW_S, threshold: float = IDLE_CORES,
              interval: float = 1.0, clock: Callable[[], float] = time.monotonic,
              sleep: Callable[[float], None] = time.sleep) -> IdleWait:
    """Sample the CPU time every ``interval`` s until the use stayed below ``threshold`` cores
    for ``window`` s in a row (or ``timeout`` passed). ``seconds`` counts from the call to the
    end of the idle window."""
    start = clock()
    last_t, last_cpu = start, cpu_seconds()
    idle_since: float | None = None
    cores: list[float] = []
    while True:
        sleep(interval)
        now, cpu = clock(), cpu_seconds()
        use = (cpu - last_cpu) / max(now - last_t, 1e-9)
        cores.append(round(use, 3))
        last_t, last_cpu = now, cpu
        if use < threshold:
            idle_since = last_t - interval if idle_since is None else idle_since
            if now - idle_since >= window - 1e-9:
                return IdleWait(round(now - start, 1), True, cores)
        else:
            idle_since = None
        if now - start >= timeout:
            return IdleWait(round(now - start, 1), False, cores)


# --- what the indexes look like on disk ----------------------------------------------------
def index_files(data_dir: Path, db: Database, run: Callable[..., list[dict[str, Any]]],
                database: str = "neo4j") -> list[dict[str, Any]]:
    """Per Lucene index (vector, full-text): its name, Lucene segments (``*.si`` files) and
    bytes on disk, from the store's ``schema/index`` folders."""
    names = {int(r["id"]): (str(r["name"]), str(r["type"]))
             for r in run(db, "scale_index_ids")}
    root = data_dir / "data" / "databases" / database / "schema" / "index"
    out: list[dict[str, Any]] = []
    if not root.is_dir():
        return out
    for provider in sorted(root.iterdir()):
        if not provider.name.startswith(LUCENE_PROVIDERS):
            continue
        for folder in sorted(provider.iterdir(), key=lambda p: p.name):
            if not folder.name.isdigit():
                continue
            files = [p for p in folder.rglob("*") if p.is_file()]
            name, kind = names.get(int(folder.name), (f"id {folder.name}", "?"))
            out.append({"index": name, "type": kind, "provider": provider.name,
                        "segments": sum(1 for p in files if p.suffix == ".si"),
                        "mib": round(sum(p.stat().st_size for p in files) / (1 << 20), 1)})
    return out
