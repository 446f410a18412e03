"""A local Neo4j server without Docker: Maven fetches the jars, a small Java class runs them.

``LocalNeo4j`` installs (once per version, cached), starts a detached JVM with Bolt on loopback,
waits until the driver connects, and stops it with SIGTERM so the store shuts down cleanly.

Layout::

    <cache root>/<version>/          ~/.cache/thalabus-graph/neo4j, or $THALABUS_NEO4J_HOME
        pom.xml  lib/*.jar  launcher-<source hash>.jar  install.lock
        cds/java<N>-<key>.jsa        class-data-sharing archive: ~40% less CPU per start
        plugins-<key>/thalabus-procedures.jar   the procedure plugin, Neo4j's plugin folder
    <data dir>/                      chosen by the caller; one server per data dir
        neo4j.pid.json  neo4j.log  neo4j.conf  neo4j.lock  neo4j.auth.json  data/  logs/


The package: ``java`` finds a JDK, ``install`` fills the cache (jars, compiled launcher, class
archive), ``process`` knows the data dir's files and which pid serves it, ``auth`` how a
start sets up auth, ``launch`` starts one launcher JVM, ``server`` holds ``LocalNeo4j``,
``memory`` sizes heap and page cache from the machine and the store, ``plugin`` builds the
procedure plugin every start installs.

Which process serves a data dir is never taken from ``neo4j.pid.json``: the launcher JVM holds
an fcntl lock on ``<data dir>/neo4j.lock`` for its whole life, and ``fcntl(F_GETLK)`` names the
holder (see ``process``).
"""

from thalabus_graph.graph.launcher.install import (
    CURRENT_VERSION,
    LTS_VERSION,
    Installation,
    default_cache_root,
    default_version,
)
from thalabus_graph.graph.launcher.java import (
    JVM_FLAGS,
    JavaInstallation,
    find_java,
    java_installation,
    java_major_range,
)
from thalabus_graph.graph.launcher.memory import MemoryPlan, recommend
from thalabus_graph.graph.launcher.process import (
    CONF_FILE,
    LOCK_FILE,
    LOG_FILE,
    PID_FILE,
    DataDir,
    free_port,
    lock_holder,
    port_answers,
    process_alive,
)
from thalabus_graph.graph.launcher.server import LocalNeo4j, default_data_dir, generate_password
from thalabus_graph.graph.launcher.status import ServerStatus

__all__ = [
    "CONF_FILE",
    "CURRENT_VERSION",
    "JVM_FLAGS",
    "LOCK_FILE",
    "LOG_FILE",
    "LTS_VERSION",
    "PID_FILE",
    "DataDir",
    "Installation",
    "JavaInstallation",
    "LocalNeo4j",
    "MemoryPlan",
    "ServerStatus",
    "default_cache_root",
    "default_data_dir",
    "default_version",
    "find_java",
    "free_port",
    "generate_password",
    "java_installation",
    "java_major_range",
    "lock_holder",
    "port_answers",
    "process_alive",
    "recommend",
]
