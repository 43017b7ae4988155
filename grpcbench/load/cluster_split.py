"""A level over a cluster's workers: its share per worker, as ``--client-processes``
splits it over processes (``builtin.split_spec``). Several scenarios at once
(``model.level_scenarios``) each get workers of their own, so each worker runs one
scenario's share as it runs any level, and its CPU figures stay that scenario's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from grpcbench.base.errors import DriverError
from grpcbench.load.builtin import split, split_spec
from grpcbench.load.cluster_worker import pooled
from grpcbench.model.load_result import GeneratorJob


def split_over_workers(
    spec: GeneratorJob, workers: int
) -> tuple[list[GeneratorJob], list[list[GeneratorJob]]]:
    """Each worker's job, and the same grouped by scenario (one group without them).
    The jobs are numbered across the level (``share.index``), so each worker's
    barrier event, pinned CPU and live intervals are its own."""
    if not spec.parts:
        parts = split_spec(spec, workers)
        return parts, [parts]
    if workers < len(spec.parts):
        raise DriverError(
            f"several scenarios on a cluster run on workers of their own: {len(spec.parts)}"
            f" scenarios, {workers} worker(s) (start more, or raise --cluster-workers)"
        )
    # The level's settings as the driver made them (a remote cluster's: no CPU numbers).
    jobs = [replace(job, settings=replace(job.settings, client_cpus=spec.settings.client_cpus))
            for job in spec.parts]  # fmt: skip
    grouped = [
        split_spec(job, count) for job, count in zip(jobs, split(workers, len(jobs)), strict=True)
    ]
    total = sum(len(group) for group in grouped)
    numbered: list[list[GeneratorJob]] = []
    index = 0
    for group in grouped:
        numbered.append([])
        for job in group:
            numbered[-1].append(replace(job, share=replace(job.share, index=index, of=total)))
            index += 1
    return [job for group in numbered for job in group], numbered


def worker_jobs(
    spec: GeneratorJob, workers: int, client: Any, run_id: str
) -> tuple[list[GeneratorJob], list[list[GeneratorJob]], Any, tuple[str, int] | None]:
    """Each worker's job, grouped by scenario, and the level's pool of calls (a queue,
    and its name and chunk, or None: ``cluster_worker.pooled``). Several scenarios have
    no pool: each worker keeps its scenario's share, as a pool would mix them."""
    parts, grouped = split_over_workers(spec, workers)
    if spec.parts:
        return parts, grouped, None, None
    parts, queue, pool = pooled(parts, client, run_id)
    return parts, [parts], queue, pool
