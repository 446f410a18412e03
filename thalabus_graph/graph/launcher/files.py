"""The files the launcher writes or trusts in a data dir, opened only when they are its own.

A data dir may come from anywhere (the default one, ``./.thalabus/neo4j-data``, sits inside
whatever repository the user cloned), so a name in it may be a symbolic link or a hard link
to a file elsewhere. Writing through it would overwrite that file; locking or reading it would
make the launcher trust another process. Every such file must therefore be absent or a regular
file with one link, owned by this user: anything else is refused before the launcher writes
anything. Opens add ``O_NOFOLLOW``, so a link swapped in after the check fails the open too.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from thalabus_graph.errors import LauncherError


def check_own_file(path: Path) -> None:
    """Raise ``LauncherError`` unless ``path`` is absent or a regular file of ours, one link.

    The message names the file and says to remove it: the launcher never deletes what it did
    not create.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise LauncherError(f"cannot inspect {path}: {exc}") from exc
    _refuse_unless_own(path, info)


def _refuse_unless_own(path: Path, info: os.stat_result) -> None:
    """Raise unless ``info`` describes a regular file with one link, owned by this user."""
    if stat.S_ISLNK(info.st_mode):
        what = "is a symbolic link"
    elif not stat.S_ISREG(info.st_mode):
        what = "is not a regular file"
    elif info.st_nlink != 1:
        what = f"has {info.st_nlink} hard links"
    elif info.st_uid != os.geteuid():
        what = f"belongs to user id {info.st_uid}"
    else:
        return
    raise LauncherError(f"refusing to use {path}: it {what}, so it may stand for a file "
                        "outside the data dir; remove it if it is not yours to keep")


def open_own(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of a data-dir file of ours; refuses links (see ``check_own_file``)."""
    check_own_file(path)
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        raise LauncherError(f"cannot open {path}: {exc}") from exc
    try:
        _refuse_unless_own(path, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_own(path: Path, data: bytes) -> None:
    """Replace the content of a data-dir file of ours (created when absent)."""
    fd = open_own(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def read_own(path: Path) -> bytes | None:
    """The content of a data-dir file of ours; None when it does not exist."""
    try:
        fd = open_own(path, os.O_RDONLY)
    except LauncherError:
        if not os.path.lexists(path):
            return None
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def write_json_own(path: Path, value: dict[str, Any]) -> None:
    """Write JSON beside ``path`` and rename it over, so readers never see half a file.

    The rename replaces a link by a file rather than writing through it; the check before
    still refuses one, as for every other file.
    """
    check_own_file(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write_own(tmp, json.dumps(value, indent=2).encode("utf-8"))
    os.replace(tmp, path)


@contextlib.contextmanager
def own_file_lock(path: Path) -> Iterator[None]:
    """An exclusive flock on a data-dir file of ours, held for the ``with`` block."""
    fd = open_own(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
