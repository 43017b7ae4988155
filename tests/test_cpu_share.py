"""Saturation: what a process used or lost over the CPU it could get."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import pytest

from grpcbench.observe import cpu_share
from grpcbench.observe.cpu_share import CpuTimes, NeighbourMeter, saturation


def test_a_busy_process_on_a_vm_whose_host_took_a_tenth_is_saturated() -> None:
    """86% of a core over the wall time is all a spinning process gets when the
    host took 10% of that core: that is saturated, not "neither"."""
    assert saturation(0.865, 1.0, 1.0) < 0.9
    assert saturation(0.865, 1.0, 1.0, steal_share=0.10) == pytest.approx(0.961, abs=1e-3)


def test_an_idle_process_stays_idle_whatever_the_host_took() -> None:
    assert saturation(0.2, 1.0, 1.0, steal_share=0.10) < 0.3


def test_neighbours_and_steal_are_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """The host's share is not a neighbour's: busy time excludes steal, and steal is
    the share of the CPUs' time over the window (all CPUs when unpinned)."""
    readings = iter(
        [
            # user nice system idle iowait irq softirq steal guest guest_nice, per CPU
            [(10, 0, 0, 10, 0, 0, 0, 0, 0, 0), (10, 0, 0, 10, 0, 0, 0, 0, 0, 0)],
            [(18, 0, 0, 11, 0, 0, 0, 1, 0, 0), (11, 0, 0, 19, 0, 0, 0, 0, 0, 0)],
        ]
    )
    times = namedtuple(  # noqa: PYI024 - psutil's own shape (scputimes)
        "times", "user nice system idle iowait irq softirq steal guest guest_nice"
    )

    def fake_cpu_times(percpu: bool) -> list[Any]:
        return [times(*row) for row in next(readings)]

    monkeypatch.setattr(cpu_share.psutil, "cpu_times", fake_cpu_times)
    meter = NeighbourMeter([0])
    meter.start()
    # CPU 0 over the window: 8 s busy, 1 s idle, 1 s stolen; the process ran 7 s.
    others, steal = meter.taken(1.0, 7.0)  # one reading of the CPUs for both
    assert others == pytest.approx(1.0)
    assert steal == pytest.approx(0.1)
    assert (CpuTimes(8.0, 1.0, 10.0) - CpuTimes(0.0, 0.0, 0.0)).steal_share == 0.1
