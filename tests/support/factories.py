"""Build result objects from known latencies, so expected figures are computable."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from grpcbench.model.connections import parse_connection_strategy
from grpcbench.model.load_result import GeneratorJob, LoadResult
from grpcbench.model.plan import LevelPlan, LoadSettings
from grpcbench.model.results import LevelResult
from grpcbench.observe.monitor import ProcessUsage
from grpcbench.stats.histogram import LatencyRecorder


def load_result(
    latencies_us: Iterable[int],
    statuses: dict[str, int],
    wall_s: float = 1.0,
    client_cpu_s: float = 0.5,
    concurrency: int = 10,
    driver: str = "builtin",
) -> LoadResult:
    recorder = LatencyRecorder()
    for value in latencies_us:
        recorder.record(value)
    return LoadResult(
        driver=driver,
        concurrency=concurrency,
        connections=1,
        statuses=statuses,
        latency=recorder.summary(),
        wall_s=wall_s,
        client_cpu_s=client_cpu_s,
    )


def level(
    server: str,
    concurrency: int = 10,
    statuses: dict[str, int] | None = None,
    latencies_us: Iterable[int] = (1000, 2000, 3000, 4000),
    client_cpu_s: float = 0.5,
    driver: str = "builtin",
) -> LevelResult:
    return LevelResult(
        scenario="hello",
        server=server,
        plan=LevelPlan(concurrency),
        measured=load_result(
            latencies_us,
            statuses or {"OK": 4},
            client_cpu_s=client_cpu_s,
            concurrency=concurrency,
            driver=driver,
        ),  # fmt: skip
        server_usage=ProcessUsage(
            cpu_s=0.8, wall_s=1.0, peak_rss_bytes=50 * 1024 * 1024, peak_rss_method="vmhwm"
        ),
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
    )


def make_spec(
    target: str,
    service: str,
    concurrency: int,
    *,
    rate: float = 0.0,
    connections: int | None = None,
    cpus: tuple[int, ...] = (),
    workload_params: dict[str, Any] | None = None,
    call: dict[str, Any] | None = None,
    security: dict[str, Any] | None = None,
    **settings: Any,
) -> GeneratorJob:
    """A whole level's spec from flat keywords: ``connections=N`` is ``pool:N``, the rest
    are ``LoadSettings`` fields (their defaults otherwise, but no warm-up and no
    timeline unless asked: a test counts exactly the calls it makes)."""
    settings.setdefault("warmup_requests", 0)
    settings.setdefault("warmup_s", 0.0)
    settings.setdefault("sample_interval_s", 0.0)
    if connections is not None:
        settings["connections"] = parse_connection_strategy(f"pool:{max(1, connections)}")
    chosen = LoadSettings(client_cpus=cpus, **settings)
    return GeneratorJob.for_level(
        target, service, LevelPlan(concurrency, rate=rate), chosen,
        workload_params=dict(workload_params or {}), call=call, security=security,
    )  # fmt: skip
