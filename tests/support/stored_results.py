"""Synthetic results files for the store's tests: one level, its latencies drawn."""

from __future__ import annotations

import random

from grpcbench.model.results import RecordedOptions, RunRecord
from tests.support.factories import level


def results(p50_us: int, number: int, *, server: str = "grpclib", spread: int = 20,
            seed: int = 0, second: int = 0) -> dict[str, object]:  # fmt: skip
    """A run's results whose level has ~1,000 calls around ``p50_us``, started at minute
    ``number`` (and ``second``)."""
    rng = random.Random(seed * 1000 + number)
    latencies = [max(1, int(rng.gauss(p50_us, spread))) for _ in range(1000)]
    one = level(server, latencies_us=latencies, statuses={"OK": 1000})
    started = f"2026-01-01T00:{number:02}:{second:02}+00:00"
    record = RunRecord(RecordedOptions(), {"hostname": "h", "git": {"commit": f"c{number:04}"}},
                       started_at=started, levels=[one])  # fmt: skip
    record.finish("complete")
    return record.to_json()
