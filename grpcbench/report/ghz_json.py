"""Results in ghz's own JSON report layout (``ghz -O json``), so tools that read ghz
reports (ghz-web's ingest, dashboards, scripts) read grpcbench's.

The layout is ghz v0.120's ``runner.Report``: durations in nanoseconds, the
latency distribution at ghz's percentiles, a 10-bucket histogram between the
fastest and the slowest call, status codes and error messages by count. One
level is one report, as one ghz run is; a run of several levels (or servers)
writes a JSON list of them, each named after its column and level. ghz's
per-call ``details`` are not kept (grpcbench keeps an HDR histogram instead),
so that list is empty.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grpcbench.model.results import LevelResult, RunRecord

GHZ_PERCENTILES = (10, 25, 50, 75, 90, 95, 99)
HISTOGRAM_BUCKETS = 10
NS_PER_US = 1000


def _histogram(level: LevelResult) -> list[dict[str, Any]]:
    """ghz's buckets: marks from fastest to slowest (seconds), each counting the calls
    above the previous mark and at or below its own."""
    latency = level.load.latency
    if not latency.count:
        return []
    fastest, slowest = latency.min_us, latency.max_us
    step = (slowest - fastest) / HISTOGRAM_BUCKETS
    marks = [fastest + step * i for i in range(HISTOGRAM_BUCKETS + 1)]
    points = latency.cumulative()
    buckets, below = [], 0.0
    for mark in marks:
        share = max((fraction for value, fraction in points if value <= mark), default=0.0)
        if mark == marks[-1]:
            share = 1.0
        count = round((share - below) * latency.count)
        buckets.append({"mark": mark / 1e6, "count": count, "frequency": share - below})
        below = share
    return buckets


def ghz_report(level: LevelResult, name: str, tags: dict[str, str]) -> dict[str, Any]:
    load = level.load
    latency = load.latency
    report: dict[str, Any] = {
        "name": name,
        "endReason": "timeout" if load.truncated else "normal",
        "date": level.finished_at,
        "options": {
            "concurrency": level.plan.concurrency,
            "total": load.count,
            "rps": int(level.plan.rate),
            "connections": load.connections,
        },
        "count": load.count,
        "total": round(load.wall_s * 1e9),
        "average": round(latency.mean_us * NS_PER_US),
        "fastest": latency.min_us * NS_PER_US,
        "slowest": latency.max_us * NS_PER_US,
        "rps": load.rps,
        "errorDistribution": dict(load.errors),
        "statusCodeDistribution": dict(load.statuses),
        "latencyDistribution": [
            {"percentage": p, "latency": latency.percentile_us(p) * NS_PER_US}
            for p in GHZ_PERCENTILES
        ]
        if latency.count
        else [],
        "histogram": _histogram(level),
        "details": [],
    }
    if tags:
        report["tags"] = tags
    return report


def write_ghz_json(record: RunRecord, path: Path) -> None:
    options = record.options
    tags = dict(options.tags)
    name = options.name
    reports = [
        ghz_report(
            level,
            name or f"{level.server} {level.describe()}",
            tags,
        )
        for level in record.levels
    ]
    body: Any = reports[0] if len(reports) == 1 else reports
    path.write_text(json.dumps(body, indent=2) + "\n")
