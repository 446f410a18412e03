"""Running the async reranking code from synchronous callers.

One rule for every sync entry point (`rerank_in_rounds_sync`, the LangChain and LlamaIndex
adapters): with no event loop in this thread, ``asyncio.run``; inside a running loop (a
notebook, an async framework calling a sync method) a fresh loop in a worker thread, since the
running loop cannot be blocked on.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion from synchronous code (see the module docstring)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def blocking(function: Callable[P, Coroutine[Any, Any, T]], doc: str) -> Callable[P, T]:
    """The synchronous form of a coroutine function: the same parameters, run by `run_sync`.

    Example:
        >>> async def double(x: int) -> int:
        ...     return 2 * x
        >>> blocking(double, "double, synchronously")(21)
        42
    """

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(function(*args, **kwargs))

    wrapper.__doc__ = doc
    wrapper.__name__ = wrapper.__qualname__ = f"{function.__name__}_sync"
    return wrapper


__all__ = ["blocking", "run_sync"]
