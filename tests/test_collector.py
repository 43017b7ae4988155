"""A level runs with the cyclic GC tuned for load, and leaves it as it found it (a Dask
worker runs levels in a process that is not ours)."""

from __future__ import annotations

import gc

from grpcbench.load.collector import LEVEL_THRESHOLD, tuned_for_load


def test_the_collector_is_tuned_during_a_level_and_restored_after() -> None:
    before = gc.get_threshold()
    with tuned_for_load():
        assert gc.get_threshold() == (LEVEL_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0  # what existed before the level
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_it_is_restored_when_the_level_fails() -> None:
    before = gc.get_threshold()
    try:
        with tuned_for_load():
            raise RuntimeError("the level failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
