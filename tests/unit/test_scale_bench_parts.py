"""The scale benchmark's own parts that decide what it reports: the idle wait and the noise."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.scale_corpus import DIMENSIONS, noise_map
from benchmarks.scale_server import wait_idle


class FakeJvm:
    """CPU seconds of a process using ``cores[i]`` cores during second ``i`` (then idle)."""

    def __init__(self, cores: list[float]) -> None:
        self.cores = cores
        self.now = 0.0
        self.cpu = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        second = int(self.now)
        self.cpu += (self.cores[second] if second < len(self.cores) else 0.0) * seconds
        self.now += seconds

    def cpu_seconds(self) -> float:
        return self.cpu


def test_the_idle_wait_ends_after_ten_idle_seconds_following_the_busy_ones() -> None:
    jvm = FakeJvm([2.0] * 30 + [0.01] * 3 + [1.5] + [0.0] * 40)
    wait = wait_idle(jvm.cpu_seconds, timeout=300, clock=jvm.clock, sleep=jvm.sleep)
    assert wait.idle
    assert wait.seconds == pytest.approx(44.0)  # 34 busy-ish seconds, then 10 idle ones
    assert wait.cores_by_second[:2] == [2.0, 2.0]


def test_the_idle_wait_gives_up_at_its_timeout_on_a_busy_server() -> None:
    jvm = FakeJvm([1.0] * 100)
    wait = wait_idle(jvm.cpu_seconds, timeout=20, clock=jvm.clock, sleep=jvm.sleep)
    assert not wait.idle
    assert wait.seconds == pytest.approx(20.0)


def test_both_generators_give_unit_expected_norm_noise_of_different_shape() -> None:
    rng = np.random.default_rng(7)
    # "real" vectors living mostly in 8 directions, as real embeddings use few directions
    basis = rng.standard_normal((8, DIMENSIONS)).astype(np.float32)
    real = (rng.standard_normal((2000, 8)) @ basis).astype(np.float32)
    draws = rng.standard_normal((4000, DIMENSIONS)).astype(np.float32)
    shaped = draws @ noise_map(real, "covariance")
    iso = draws @ noise_map(real, "isotropic")
    for noise in (shaped, iso):
        assert float(np.mean(np.sum(noise * noise, axis=1))) == pytest.approx(1.0, rel=0.05)
    top8 = [float(np.sum(np.sort(np.linalg.svd(n, compute_uv=False) ** 2)[::-1][:8])
                  / np.sum(np.linalg.svd(n, compute_uv=False) ** 2)) for n in (shaped, iso)]
    assert top8[0] > 0.99  # the covariance generator stays in the real vectors' directions
    assert top8[1] < 0.1  # the isotropic one spreads over all of them
