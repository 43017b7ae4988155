"""The fake driver: synthetic, seeded results without any network traffic.

For fast tests of the CLI, runner and exporters only. Its figures are not
measurements, and every table that shows them says so.
"""

from __future__ import annotations

import asyncio
import random

from grpcbench.load.driver import MEASUREMENT_STARTED, DriverSettings, ProgressCallback
from grpcbench.model.load_result import GeneratorJob, LoadResult
from grpcbench.stats.histogram import LatencyRecorder

# Every FAILURE_EVERY-th call is reported as Unavailable, so error rows get exercised.
FAILURE_EVERY = 100


class FakeDriver:
    name = "fake"

    async def run(self, spec: GeneratorJob, progress: ProgressCallback) -> LoadResult:
        rng = random.Random(spec.share.concurrency)
        requests = spec.share.requests or 1000
        progress(MEASUREMENT_STARTED, 0)
        recorder = LatencyRecorder()
        statuses = {"OK": 0, "Unavailable": 0}
        for i in range(1, requests + 1):
            recorder.record(int(rng.lognormvariate(6.5, 0.4) * spec.share.concurrency))
            statuses["Unavailable" if i % FAILURE_EVERY == 0 else "OK"] += 1
        await asyncio.sleep(0.01)
        progress(requests, statuses["Unavailable"])
        latency = recorder.summary()
        return LoadResult(
            driver=self.name,
            concurrency=spec.share.concurrency,
            connections=spec.share.connections,
            statuses=statuses,
            latency=latency,
            wall_s=latency.total_us / 1e6 / spec.share.concurrency,
            client_cpu_s=0.0,
            errors={"Unavailable: a fake failure": statuses["Unavailable"]}
            if statuses["Unavailable"]
            else {},
        )


def create(settings: DriverSettings) -> FakeDriver:
    return FakeDriver()
