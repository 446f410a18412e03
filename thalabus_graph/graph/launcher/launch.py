"""One launcher JVM: its command line, the process started with its log and the password on
stdin (never in argv), and the record the pid file keeps of it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from thalabus_graph.graph.launcher.files import open_own
from thalabus_graph.graph.launcher.java import JVM_FLAGS, JavaInstallation, _version_flags
from thalabus_graph.graph.launcher.process import LAUNCHER_CLASS

CDS_ARCHIVE_FLAG = "-XX:SharedArchiveFile="


def jvm_argv(java: JavaInstallation, heap: str, cds_flags: list[str], *,
             exit_with_parent: bool, auth_mode: str, classpath: str, data_dir: Path, port: int,
             conf: Path) -> list[str]:
    """The launcher JVM's command line: heap, the JVM flags of its version, the class archive,
    the parent it dies with, its auth mode, then the launcher's data dir, port and settings."""
    argv = [str(java.java), f"-Xmx{heap}", *JVM_FLAGS, *_version_flags(java), *cds_flags]
    if exit_with_parent:
        argv.append(f"-Dthalabus.parentPid={os.getpid()}")
    argv.append(f"-Dthalabus.auth={auth_mode}")
    argv += ["-cp", classpath, LAUNCHER_CLASS, str(data_dir), str(port), str(conf)]
    return argv


def spawn(argv: list[str], data_dir: Path, log_file: Path,
          password: str | None) -> subprocess.Popen[bytes]:
    """Start the JVM detached in its own session, writing to a fresh ``log_file``; a password
    is written to its stdin and the pipe closed (a JVM gone already is left to the wait)."""
    with os.fdopen(open_own(log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as log:
        proc = subprocess.Popen(
            argv, cwd=data_dir, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL if password is None else subprocess.PIPE,
            start_new_session=True, close_fds=True,
        )
    if proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(f"{password}\n".encode())
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
    return proc


def pid_record(proc: subprocess.Popen[bytes], java: JavaInstallation, *, port: int, uri: str,
               version: str, data_dir: Path, log_file: Path, auth_mode: str,
               heap: str | None, page_cache: str | None, cds_flags: list[str]) -> dict[str, Any]:
    """What the pid file says of a started JVM. Its ``auth`` is the mode's until the server
    says (a probe starts with auth on)."""
    return {
        "pid": proc.pid, "port": port, "uri": uri, "version": version,
        "java_home": str(java.home), "data_dir": str(data_dir),
        "log_file": str(log_file), "started_at": time.time(),
        "auth": auth_mode != "off",
        "heap": heap, "page_cache": page_cache,
        "class_data_archive": next(
            (f.split("=", 1)[1] for f in cds_flags if f.startswith(CDS_ARCHIVE_FLAG)), None),
    }
