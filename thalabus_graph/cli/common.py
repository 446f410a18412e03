"""Shared CLI plumbing: connection and --json options, JSON output and error-to-exit mapping.

Every command that talks to Neo4j takes ``--uri``, ``--username``, ``--password-stdin`` and
``--database``, falling back to ``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD`` and
``NEO4J_DATABASE`` (``thalabus_graph.graph.connection``), like Neo4j's own tools.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from collections.abc import Callable

from neo4j.exceptions import AuthError

from thalabus_graph.cli.output import emit_json as emit_json  # the one JSON writer (depth-safe)
from thalabus_graph.cli.output import shown
from thalabus_graph.engine import ThalabusGraph
from thalabus_graph.errors import (
    ConfigurationError,
    IngestError,
    ThalabusError,
    ThalabusSyntaxError,
)
from thalabus_graph.graph.connection import DEFAULT_URI, Connection
from thalabus_graph.settings import Settings

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2

Handler = Callable[[argparse.Namespace], int]


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
NOTICE_LOGGERS = ("thalabus_graph.progress", "thalabus_graph.embeddings.local")
"""Loggers whose INFO lines the CLI shows at its default level: progress of long work and the
embedding model loading, so no long wait is silent."""


def add_logging_options(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """Add ``-v/--verbose`` and ``--log-level`` (on a sub-command they only override the
    top-level values when given)."""
    default: object = 0 if top_level else argparse.SUPPRESS
    parser.add_argument("-v", "--verbose", action="count", default=default,
                        help="log to stderr: -v INFO, -vv DEBUG")
    parser.add_argument("--log-level", choices=LOG_LEVELS, type=str.upper,
                        default=None if top_level else argparse.SUPPRESS,
                        help="log level on stderr (default WARNING)")


class _CliHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The stderr handler the CLI puts on the package logger (one at a time); it writes to
    whatever ``sys.stderr`` is when a record arrives."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


class _ShownFormatter(logging.Formatter):
    """Log lines with the characters a terminal would act on or hide escaped
    (``output.shown``): a record naming a stored dataset, goal or session prints it as the
    tables do, on one line; a traceback below it stays as it is."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return shown(super().formatMessage(record))


def configure_logging(args: argparse.Namespace) -> None:
    """Send the package's log records to stderr at the level the flags ask for.

    The handler sits on the ``thalabus_graph`` logger (records still propagate), and
    replaces the one an earlier call in this process installed.
    """
    level_name = getattr(args, "log_level", None)
    verbose = int(getattr(args, "verbose", 0) or 0)
    if level_name is None:
        level_name = {0: "WARNING", 1: "INFO"}.get(verbose, "DEBUG")
    package = logging.getLogger("thalabus_graph")
    for old in [h for h in package.handlers if isinstance(h, _CliHandler)]:
        package.removeHandler(old)
    handler = _CliHandler(sys.stderr)
    handler.setFormatter(_ShownFormatter("%(levelname)s %(name)s: %(message)s"))
    package.addHandler(handler)
    package.setLevel(getattr(logging, level_name))
    quiet = getattr(args, "log_level", None) is not None and level_name != "INFO"
    for name in NOTICE_LOGGERS:  # at the default level, notices still show
        logging.getLogger(name).setLevel(logging.NOTSET if quiet else logging.INFO)
    # the driver's own warnings (a defunct connection, a transaction retried) would reach
    # stderr through Python's last-resort handler; the command reports the error it ends in
    logging.getLogger("neo4j").setLevel(
        logging.NOTSET if level_name in ("INFO", "DEBUG") else logging.ERROR)


def finite_float(low: float | None = 0.0, high: float | None = None) -> Callable[[str], float]:
    """An argparse ``type`` for a float flag: a finite number in ``[low, high]`` (either bound
    None: open on that side). The default ``low=0`` suits durations and counts; a reranker
    threshold (logits may be negative) passes ``low=None``.

    ``float()`` alone accepts ``nan``, ``inf`` and ``1e999``: a NaN timeout compares false
    with every deadline (a wait that never ends or ends at once), so such text is refused
    like any other bad input (argparse prints it and exits 2).
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low:g}, not {text!r}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:g}, not {text!r}")
        return value

    return parse


def add_common_options(parser: argparse.ArgumentParser, *, uri: bool = True) -> None:
    """Add ``--json``, the logging flags and (unless ``uri=False``) the connection options to a
    sub-command."""
    if uri:
        group = parser.add_argument_group(
            "connection", "default: $NEO4J_URI, $NEO4J_USERNAME, $NEO4J_PASSWORD, "
            "$NEO4J_DATABASE (no password: no auth)")
        group.add_argument(
            "--uri", default=None,
            help=f"Bolt URI of the Neo4j server (default: $NEO4J_URI, else {DEFAULT_URI})",
        )
        group.add_argument("--username", default=None,
                           help="user name (default: $NEO4J_USERNAME, else neo4j)")
        group.add_argument("--password-stdin", action="store_true",
                           help="read the password from the first line of stdin "
                           "(default: $NEO4J_PASSWORD)")
        group.add_argument("--database", default=None,
                           help="database name (default: $NEO4J_DATABASE, else neo4j)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    add_logging_options(parser)


def connection(args: argparse.Namespace) -> Connection:
    """The connection the options and the ``NEO4J_*`` variables describe."""
    password: str | None = None
    if getattr(args, "password_stdin", False):
        line = sys.stdin.readline()
        if not line:
            raise ConfigurationError("--password-stdin: nothing on stdin")
        password = line.rstrip("\r\n")
    return Connection.resolve(getattr(args, "uri", None), username=getattr(args, "username", None),
                              password=password, database=getattr(args, "database", None))


def run(args: argparse.Namespace) -> int:
    """Call the sub-command handler and map our exceptions to exit codes and one-line errors."""
    handler: Handler = args.handler
    try:
        return handler(args)
    except ThalabusSyntaxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (ConfigurationError, IngestError) as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ThalabusError as exc:
        print(f"error: {one_line(_for_the_cli(exc))}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (BrokenPipeError, SystemExit):
        raise
    except Exception as exc:  # a bug or an unmapped library error: still one line
        logging.getLogger(__name__).debug("unexpected failure", exc_info=True)
        print(f"error: unexpected {type(exc).__name__}: {one_line(str(exc))} (-vv logs the "
              "traceback)", file=sys.stderr)
        return EXIT_FAILURE


def one_line(message: str) -> str:
    """A message on one line: its lines joined by spaces (driver messages hold newlines)."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def _for_the_cli(exc: ThalabusError) -> str:
    """The error's message in the CLI's terms: a failed login names the flags that set the
    user and password (the library's message names the API's arguments and variables)."""
    if isinstance(exc.__cause__, AuthError):
        return (f"{exc}; on the command line: --username and --password-stdin")
    return str(exc)


def graph(args: argparse.Namespace, settings: Settings | None = None) -> ThalabusGraph:
    """The engine on the command's connection, with ``settings`` (None: the environment's,
    read now) and the command's ``--required-filter`` when it has one."""
    target = connection(args)
    return ThalabusGraph.connect(target.uri, auth=target.auth, database=target.database,
                                 settings=settings or Settings.from_env(),
                                 required_filter=getattr(args, "required_filter", None))
