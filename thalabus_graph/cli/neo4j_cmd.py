"""``thalabus-graph neo4j start|stop|status``: a local Neo4j Community server without Docker.

Wraps ``thalabus_graph.graph.launcher.LocalNeo4j``; the data dir identifies the server.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from thalabus_graph.cli import common
from thalabus_graph.errors import ConfigurationError, LauncherError
from thalabus_graph.graph.launcher import (
    LocalNeo4j,
    ServerStatus,
    default_data_dir,
    generate_password,
)
from thalabus_graph.graph.launcher.memory import (
    HEAP_ENV,
    PAGE_CACHE_ENV,
    setting,
    store_size,
)

_EPILOG = """\
examples:
  thalabus-graph neo4j start                      # free port, ./.thalabus/neo4j-data
  export NEO4J_URI=$(thalabus-graph neo4j start | tail -n 1)
  thalabus-graph neo4j start --port 7687 --neo4j-version 2026.09.0 --data /tmp/n4j
  thalabus-graph neo4j start --auth               # prints a generated password once
  thalabus-graph neo4j start --heap 2g --page-cache 4g
  printf '%s\\n' "$PW" | thalabus-graph neo4j start --auth-password-stdin
  thalabus-graph neo4j status --json
  thalabus-graph neo4j stop

The first start downloads Neo4j Community with Maven (needs java, javac, mvn; about 30 s)
into ~/.cache/thalabus-graph/neo4j (or $THALABUS_NEO4J_HOME). The default data dir is
$THALABUS_NEO4J_DATA, else ./.thalabus/neo4j-data. The default version is
$THALABUS_NEO4J_VERSION, else the one that last ran the data dir's store, else 2026.09.0 when
a JDK 21+ is found (its vector search is several times faster) and 5.26.31 LTS (Java 17) when
not. A store started by 2026.x cannot go back to 5.26.

Memory: the heap and page cache follow neo4j-admin's memory recommendation for this machine
(an OS reserve and a heap from its table, the heap at most 4g), the page cache sized to the
store plus a fifth, at least 2g, at most what is left; --heap / --page-cache (or
$THALABUS_NEO4J_HEAP / $THALABUS_NEO4J_PAGE_CACHE) set them. start and status warn when the
store has outgrown the page cache.
"""


def _add_data_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, default=None, metavar="DIR",
        help="data dir of the server (default: $THALABUS_NEO4J_DATA, else ./.thalabus/neo4j-data)",
    )


def register(subparsers: Any) -> None:
    """Add the ``neo4j`` command group with ``start``, ``stop`` and ``status``."""
    group = subparsers.add_parser(
        "neo4j", help="start, stop or inspect a local Neo4j server (no Docker)",
        description="Run Neo4j Community locally on 127.0.0.1 with Bolt, no Docker; auth off "
        "unless --auth or --auth-password-stdin.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = group.add_subparsers(dest="neo4j_action", metavar="ACTION", required=True)
    _add_start(actions)
    _add_stop(actions)
    _add_status(actions)


def _add_start(actions: Any) -> None:
    """``neo4j start``: start a server and print its Bolt URI last."""
    start = actions.add_parser(
        "start", help="start a server; prints its Bolt URI as the last line",
        description="Start Neo4j and return once it answers Bolt. The last line of stdout is "
        "the Bolt URI (with --json: one JSON object). On a data dir whose server already "
        "runs, it prints that server's URI the same way (exit 0). Auth stays as the data "
        "dir's record (neo4j.auth.json) says: a store that had a password keeps it; a store "
        "whose record is missing or damaged starts only with auth stated (--auth-password-stdin "
        "or --no-auth).",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    start.add_argument("--port", type=int, default=None,
                       help="Bolt port on 127.0.0.1 (default: a free one)")
    _add_data_option(start)
    start.add_argument("--neo4j-version", default=None, metavar="V",
                       help="Neo4j version from Maven Central (default: see below)")
    start.add_argument("--heap", default=None, metavar="SIZE",
                       help="JVM maximum heap, e.g. 2g (default: $THALABUS_NEO4J_HEAP, else "
                       "sized from the machine's memory)")
    start.add_argument("--page-cache", default=None, metavar="SIZE",
                       help="Neo4j page cache, e.g. 4g (default: $THALABUS_NEO4J_PAGE_CACHE, "
                       "else sized from the machine's memory and the store)")
    start.add_argument("--timeout", type=common.finite_float(), default=180.0,
                       help="seconds to wait for the server to answer (default 180)")
    auth = start.add_mutually_exclusive_group()
    auth.add_argument("--auth", action="store_true",
                      help="enable auth for user neo4j with a generated password, printed once")
    auth.add_argument("--auth-password-stdin", action="store_true",
                      help="enable auth for user neo4j with the password on stdin's first line")
    auth.add_argument("--no-auth", action="store_true",
                      help="state that the store has no auth, where its record "
                      "(neo4j.auth.json) is missing or damaged; a store with a password user "
                      "keeps auth on all the same")
    common.add_common_options(start, uri=False)
    start.set_defaults(handler=_start)


def _add_stop(actions: Any) -> None:
    """``neo4j stop``: stop the server of a data dir."""
    stop = actions.add_parser(
        "stop", help="stop the server of a data dir",
        description="Stop the server with SIGTERM (clean shutdown), SIGKILL after --timeout.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_data_option(stop)
    stop.add_argument("--timeout", type=common.finite_float(), default=60.0,
                      help="seconds to wait before SIGKILL (default 60)")
    common.add_common_options(stop, uri=False)
    stop.set_defaults(handler=_stop)


def _add_status(actions: Any) -> None:
    """``neo4j status``: whether a server runs on a data dir (exit 0 or 1)."""
    status = actions.add_parser(
        "status", help="report whether a server runs on a data dir",
        description="Exit code 0 when a server runs on the data dir, 1 when none does.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_data_option(status)
    common.add_common_options(status, uri=False)
    status.set_defaults(handler=_status)


def _server(args: argparse.Namespace, password: str | None = None) -> LocalNeo4j:
    data = args.data if args.data is not None else default_data_dir()
    return LocalNeo4j(
        version=getattr(args, "neo4j_version", None),
        data_dir=data,
        port=getattr(args, "port", None),
        heap=setting(getattr(args, "heap", None), HEAP_ENV),
        page_cache=setting(getattr(args, "page_cache", None), PAGE_CACHE_ENV),
        password=password,
        auth_off=getattr(args, "no_auth", False),
    )


def _password(args: argparse.Namespace) -> str | None:
    """The password to enable auth with: generated (--auth), from stdin, or None."""
    if args.auth:
        return generate_password()
    if args.auth_password_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise ConfigurationError("--auth-password-stdin: no password on stdin")
        return line
    return None


def _start(args: argparse.Namespace) -> int:
    running = _server(args).status()
    if running.running:
        return _already_running(args, running)
    password = _password(args)
    server = _server(args, password)
    if not server.installed():
        print(f"installing Neo4j {server.version} into {server.cache_dir} (first time only)...",
              file=sys.stderr, flush=True)
    uri = server.start(timeout=args.timeout)
    state_now = server.status()
    for warning in state_now.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        state = state_now.to_dict()
        if args.auth:
            state.update(username="neo4j", password=password)
        print(json.dumps(state))
    else:
        print(f"Neo4j {server.version} running on {server.data_dir} (log: {server.log_file})",
              file=sys.stderr)
        print(_memory_line(server), file=sys.stderr)
        hint = warm_up_hint(server.memory_plan.store if server.memory_plan
                            else store_size(server.data_dir))
        if hint:
            print(hint, file=sys.stderr)
        if server.auth_kept:
            print("auth stays on: this store was set up with a password for user neo4j",
                  file=sys.stderr)
        if args.auth:  # shown once: it is stored nowhere but in Neo4j's system database
            print(f"NEO4J_USERNAME=neo4j\nNEO4J_PASSWORD={password}")
        print(uri)
    return common.EXIT_OK


def _already_running(args: argparse.Namespace, state: ServerStatus) -> int:
    """A start on a data dir whose server runs: its URI, as a start would print it.

    ``export NEO4J_URI=$(thalabus-graph neo4j start | tail -n 1)`` in a new shell then gives
    the running server's URI; a start that asked for another port or version cannot be met
    by this server, so it fails and says how to get one."""
    stop = f"thalabus-graph neo4j stop --data {state.data_dir}"
    if args.port is not None and state.port != args.port:
        raise LauncherError(f"Neo4j already runs on {state.data_dir} on port {state.port}, "
                            f"not {args.port}; stop it first: {stop}")
    if args.neo4j_version is not None and state.version not in (None, args.neo4j_version):
        raise LauncherError(f"Neo4j {state.version} already runs on {state.data_dir}, not "
                            f"{args.neo4j_version}; stop it first: {stop}")
    deadline = time.monotonic() + args.timeout  # a start still under way: wait for it
    while not state.answering and state.running and time.monotonic() < deadline:
        time.sleep(0.2)
        state = LocalNeo4j(data_dir=state.data_dir).status()
    if not state.running or state.uri is None:
        raise LauncherError(f"the Neo4j of {state.data_dir} stopped while this start waited "
                            "for it; start it again")
    if args.json:
        common.emit_json({**state.to_dict(), "already_running": True})
        return common.EXIT_OK
    print(f"Neo4j {state.version} is already running on {state.data_dir} (pid {state.pid}"
          f"{', auth on' if state.auth else ''}"
          f"{'' if state.answering else ', not answering yet'}); its URI follows "
          f"(to stop it: {stop})", file=sys.stderr)
    if args.auth or args.auth_password_stdin:
        print("note: the password is set by the start that enables auth; a running server "
              "keeps the one it has", file=sys.stderr)
    print(state.uri)
    return common.EXIT_OK


def _memory_line(server: LocalNeo4j) -> str:
    """How the server's memory was sized, for stderr."""
    plan = server.memory_plan
    line = f"heap {server.heap}, page cache {server.page_cache}"
    if plan is None:
        return line + " (as set)"
    return (line + f" (sized for {_human(plan.machine)} of memory and a {_human(plan.store)} "
            "store; --heap / --page-cache set them)")


WARM_UP_HINT_STORE = 1 << 20
"""A store of at least this many bytes has been used (a new one is far smaller; a migrated one,
even without documents, is larger): a start on it names the warm-up."""


def warm_up_hint(store: int) -> str:
    """The line saying how to spare the first queries their planning, for a start on a used
    store (``store``: its size in bytes): empty for a new one."""
    if store < WARM_UP_HINT_STORE:
        return ""
    return ("a fresh server plans each search statement the first time a query needs it "
            "(seconds each): on a graph that holds documents, `thalabus-graph warm-up` runs "
            "every query form now")


def _human(size: int) -> str:
    """Bytes in GiB with one decimal, or in MiB below one GiB."""
    return f"{size / (1 << 30):.1f} GiB" if size >= 1 << 30 else f"{size / (1 << 20):.1f} MiB"


def _stop(args: argparse.Namespace) -> int:
    server = _server(args)
    stopped = server.stop(timeout=args.timeout)
    if args.json:
        common.emit_json({"data_dir": str(server.data_dir), "stopped": stopped})
    else:
        print(f"stopped Neo4j on {server.data_dir}" if stopped
              else f"no Neo4j running on {server.data_dir}"
              + ("" if args.data is not None else
                 " (a server started with --data DIR stops with: neo4j stop --data DIR)"))
    return common.EXIT_OK


def _status(args: argparse.Namespace) -> int:
    state = _server(args).status()
    for warning in state.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        common.emit_json(state.to_dict())
    elif state.running:
        print(f"running: pid {state.pid}, {state.uri}, Neo4j {state.version}, "
              f"{'auth on, ' if state.auth else ''}"
              f"{f'heap {state.heap}, page cache {state.page_cache}, ' if state.heap else ''}"
              f"{'answering' if state.answering else 'not answering yet'} "
              f"(data {state.data_dir})")
    else:
        print(f"not running (data {state.data_dir})")
    return common.EXIT_OK if state.running else common.EXIT_FAILURE
