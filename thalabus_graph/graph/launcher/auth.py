"""Auth of a launcher server: the form a password must have, how the launcher JVM starts auth
on a store (from the data dir's auth record, ``neo4j.auth.json``), what is recorded before the
JVM starts, and what its log says once it has.

A store whose record is missing or damaged is refused unless auth is stated: reading such a
store as "auth off" would open an auth store to anyone on this machine.
"""

from __future__ import annotations

from pathlib import Path

from thalabus_graph.errors import ConfigurationError, LauncherError
from thalabus_graph.graph.launcher.process import MIN_PASSWORD_LENGTH, DataDir, auth_in_log

STATE_AUTH = ("start it with --auth-password-stdin and the store's password for user neo4j "
              "(Python: password=...), or with --no-auth if it never had one (Python: "
              "auth_off=True; a store with a password user keeps auth on all the same)")
"""What to do when the auth record cannot say whether the store has auth."""


def check_password(password: str | None) -> None:
    """Refuse a password shorter than ``MIN_PASSWORD_LENGTH`` or holding a line break (it
    travels to the JVM as one line on stdin); None (no password) passes."""
    if password is not None and (len(password) < MIN_PASSWORD_LENGTH
                                 or "\n" in password or "\r" in password):
        raise ConfigurationError(
            f"the Neo4j password must have at least {MIN_PASSWORD_LENGTH} characters "
            "and no line break")


def auth_mode(files: DataDir, *, password_given: bool, auth_off: bool) -> str:
    """How the launcher JVM starts auth (its ``thalabus.auth``): ``stdin`` (the password
    given), ``on`` (the record says auth), ``off`` (the record says none, or a new store),
    ``probe`` (auth stated off where the record cannot tell: the store's users decide).

    A store whose record is missing or damaged is refused unless ``auth_off`` states it.
    """
    if password_given:
        return "stdin"
    try:
        recorded = files.recorded_auth()
    except LauncherError as exc:
        if auth_off:
            return "probe"
        raise LauncherError(f"{exc}; {STATE_AUTH}") from exc
    if recorded is not None:
        return "on" if recorded else "off"
    if not files.holds_store():
        return "off"
    if auth_off:
        return "probe"
    raise LauncherError(
        f"the store in {files.path} has no auth record ({files.auth_file}), so "
        f"whether it needs a password is unknown; {STATE_AUTH}")


def record_before_start(files: DataDir, mode: str) -> None:
    """Record the auth a start will set up before its JVM runs: a password is set before the
    server says it is ready, and a new store has no user with a password."""
    if mode == "stdin":
        files.record_auth(True)
    elif mode == "off" and not files.holds_store():
        files.record_auth(False)


def auth_said_by_log(log_file: Path) -> bool:
    """Whether the started server runs with auth, as its log says; a log that does not say is
    a ``LauncherError``."""
    auth = auth_in_log(log_file)
    if auth is None:
        raise LauncherError(f"Neo4j started but its log {log_file} does not say "
                            "whether auth is on; stop it and start again")
    return auth
