"""One connection runs at most ``max_concurrent_queries`` queries at once; the rest wait for
a turn within their time budget (``bounds.within_budget``)."""

from __future__ import annotations

import threading

import pytest

from thalabus_graph.bounds import within_budget
from thalabus_graph.errors import QueryTimeout
from thalabus_graph.settings import Settings


class Probe:
    """A stand-in for a ``ThalabusGraph``'s bounds: settings and the turns they size."""

    def __init__(self, turns: int, timeout: float) -> None:
        self.settings = Settings.from_env().replace(max_concurrent_queries=turns,
                                                    query_timeout_seconds=timeout)
        self.in_flight = threading.BoundedSemaphore(turns)
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()
        self.go = threading.Event()

    @within_budget
    def query(self) -> int:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        self.go.wait(30)
        with self.lock:
            self.running -= 1
        return 1


def test_a_burst_runs_at_most_the_turns_at_once_and_every_call_answers() -> None:
    probe = Probe(turns=2, timeout=60)
    answers: list[int] = []
    threads = [threading.Thread(target=lambda: answers.append(probe.query()))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    probe.go.set()
    for thread in threads:
        thread.join(60)
    assert answers == [1] * 8
    assert probe.most <= 2
    assert probe.in_flight.acquire(blocking=False) and probe.in_flight.acquire(blocking=False)


def test_a_call_that_gets_no_turn_within_its_budget_times_out_and_names_the_setting() -> None:
    probe = Probe(turns=1, timeout=0.05)
    assert probe.in_flight.acquire(blocking=False)      # the one turn is taken
    with pytest.raises(QueryTimeout, match="MAX_CONCURRENT_QUERIES"):
        probe.query()
    probe.in_flight.release()
    probe.go.set()
    assert probe.query() == 1
