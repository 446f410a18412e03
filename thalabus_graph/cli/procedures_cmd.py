"""``thalabus-graph procedures jar``: the Cypher procedure plugin for a server the user runs.

Builds (or takes from the launcher's cache) the plugin jar for one Neo4j version and copies it
into a folder: a self-managed server's ``plugins/`` or the one a Docker image mounts.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

from thalabus_graph.cli import common
from thalabus_graph.errors import LauncherError
from thalabus_graph.graph.launcher import Installation, default_cache_root, default_version
from thalabus_graph.graph.launcher.install import checked_version
from thalabus_graph.graph.launcher.plugin import JAR_NAME, build, expected_version

_EPILOG = """\
examples:
  thalabus-graph procedures jar --out ./plugins             # the launcher's default line
  thalabus-graph procedures jar --out ./plugins --neo4j-version 5.26.31
  docker run -v "$PWD/plugins:/plugins" neo4j:5.26          # loads it at start

The jar is compiled with javac against the Neo4j jars the launcher caches (needs java, javac,
mvn, like `thalabus-graph neo4j start`); `CALL thalabus.version()` on the server then yields
the engine version the jar was built from (docs/procedures.md).
"""


def register(subparsers: Any) -> None:
    """Add the ``procedures`` command group with ``jar``."""
    group = subparsers.add_parser(
        "procedures", help="the Cypher procedure plugin for a Neo4j server you run",
        description="The thalabus Cypher procedures (thalabus.version, ...) as a Neo4j "
        "plugin jar; servers started by `thalabus-graph neo4j start` have it already.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = group.add_subparsers(dest="procedures_action", metavar="ACTION", required=True)
    jar = actions.add_parser(
        "jar", help="write thalabus-procedures.jar into a folder",
        description="Build the plugin jar for one Neo4j version (cached after the first "
        "time) and copy it into DIR. The last line of stdout is the jar's path (with --json: "
        "one JSON object).",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    jar.add_argument("--out", type=Path, required=True, metavar="DIR",
                     help="folder to write thalabus-procedures.jar into (created if missing)")
    jar.add_argument("--neo4j-version", default=None, metavar="V",
                     help="the Neo4j version the server runs (default: "
                     "$THALABUS_NEO4J_VERSION, else the launcher's default for a new store)")
    common.add_common_options(jar, uri=False)
    jar.set_defaults(handler=_jar)


def _jar(args: argparse.Namespace) -> int:
    version = checked_version(args.neo4j_version or default_version())
    installation = Installation(version, default_cache_root().absolute() / version, None)
    if not installation.installed():
        print(f"installing Neo4j {version} into {installation.cache_dir} (first time only)...",
              file=sys.stderr, flush=True)
    built = build(installation)
    target = args.out / JAR_NAME
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)
    except OSError as exc:
        raise LauncherError(f"cannot write {target}: {exc}") from exc
    plugin_version = expected_version()
    if args.json:
        common.emit_json({"jar": str(target.absolute()), "neo4j_version": version,
                          "version": plugin_version})
        return common.EXIT_OK
    print(f"thalabus procedures {plugin_version} for Neo4j {version}: copy the jar into the "
          "server's plugins folder and restart it", file=sys.stderr)
    print(target.absolute())
    return common.EXIT_OK
