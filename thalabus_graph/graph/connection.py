"""Where and as whom to connect: one configuration for the API, every CLI command and the tests.

The variables are the ones Neo4j's own tools read: ``NEO4J_URI``, ``NEO4J_USERNAME``,
``NEO4J_PASSWORD``, ``NEO4J_DATABASE``. Explicit values (arguments, CLI flags) win over them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from thalabus_graph.errors import ConfigurationError

DEFAULT_URI = "bolt://127.0.0.1:7687"
DEFAULT_USERNAME = "neo4j"
DEFAULT_DATABASE = "neo4j"
ENV_URI, ENV_USERNAME, ENV_PASSWORD, ENV_DATABASE = (
    "NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE")


SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
"""The URI schemes the Neo4j driver speaks."""
_USER_INFO = re.compile(r"(?<=://)[^/@]*@")


def redact_uri(uri: str) -> str:
    """``uri`` without its user info (``bolt://neo4j:PW@host`` -> ``bolt://***@host``): the
    only form of a URI that is printed or logged."""
    return _USER_INFO.sub("***@", uri)


def check_uri(uri: str) -> str:
    """``uri`` when the driver can use it as given, else a one-line ``ConfigurationError``.

    Refused: an unknown scheme, no host, a port that is not a number in 1-65535 (the driver
    would wrap 99999 to 34463 silently, or fail in DNS on ``notaport``), and user info (the
    driver does not read credentials from the URI: give NEO4J_USERNAME / NEO4J_PASSWORD).
    """
    shown = redact_uri(uri)
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        raise ConfigurationError(f"Neo4j URI {shown}: the port must be a number in 1-65535"
                                 ) from None
    if parts.scheme not in SCHEMES:
        raise ConfigurationError(f"Neo4j URI {shown}: the scheme must be one of "
                                 f"{', '.join(SCHEMES)}")
    if not parts.hostname:
        raise ConfigurationError(f"Neo4j URI {shown}: no host")
    if port is not None and not 1 <= port <= 65535:
        raise ConfigurationError(f"Neo4j URI {shown}: the port must be a number in 1-65535")
    if "@" in parts.netloc:
        raise ConfigurationError(f"Neo4j URI {shown}: credentials do not belong in the URI; "
                                 "give them in NEO4J_USERNAME and NEO4J_PASSWORD (or "
                                 "--username / --password-stdin)")
    return uri


@dataclass(frozen=True)
class Connection:
    """A Neo4j address, credentials and database; the password never shows in ``repr``.

    Example:
        >>> c = Connection.resolve(environ={"NEO4J_PASSWORD": "s3cret"})
        >>> c.auth, c.uri, c.database
        (('neo4j', 's3cret'), 'bolt://127.0.0.1:7687', 'neo4j')
        >>> "s3cret" in repr(c)
        False
    """

    uri: str = DEFAULT_URI
    username: str = DEFAULT_USERNAME
    password: str | None = field(default=None, repr=False)
    database: str = DEFAULT_DATABASE

    def __post_init__(self) -> None:
        check_uri(self.uri)

    @property
    def auth(self) -> tuple[str, str] | None:
        """``(username, password)`` for the driver, or None (no auth) without a password."""
        return None if self.password is None else (self.username, self.password)

    @classmethod
    def resolve(cls, uri: str | None = None, *, username: str | None = None,
                password: str | None = None, database: str | None = None,
                environ: Mapping[str, str] | None = None) -> Connection:
        """Explicit values first, then the ``NEO4J_*`` variables, then the defaults.

        An empty variable counts as unset, so ``NEO4J_PASSWORD=`` means no auth.
        """
        env = os.environ if environ is None else environ

        def pick(given: str | None, name: str, default: str | None) -> str | None:
            if given is not None:
                return given
            return env.get(name) or default

        return cls(
            uri=pick(uri, ENV_URI, DEFAULT_URI) or DEFAULT_URI,
            username=pick(username, ENV_USERNAME, DEFAULT_USERNAME) or DEFAULT_USERNAME,
            password=pick(password, ENV_PASSWORD, None),
            database=pick(database, ENV_DATABASE, DEFAULT_DATABASE) or DEFAULT_DATABASE,
        )


__all__ = ["DEFAULT_URI", "SCHEMES", "Connection", "check_uri", "redact_uri"]
