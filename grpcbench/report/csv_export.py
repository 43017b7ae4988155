"""CSV exporter: one row per measured level (target, driver, level, repeat), raw numbers.

It does not use the table model: tables show formatted means over repeats,
while a spreadsheet wants every repeat's raw figures and every dimension that
tells two rows of a sweep apart (rate, channels, connections, variant, repeat).
"""

from __future__ import annotations

import csv
import io

from grpcbench.model.results import LevelResult, RunRecord
from grpcbench.report.figures import PERCENTILES

FIELDS = [
    "scenario", "server", "driver", "concurrency", "rate", "channels", "connection", "variant",
    "repeat", "count", "ok", "errors", "total_s", "slowest_ms", "fastest_ms", "average_ms",
    *[f"{name}_ms" for name, _ in PERCENTILES],
    "rps", "server_cpu_s", "server_peak_rss_bytes", "client_cpu_s", "client_saturated",
]  # fmt: skip


def level_row(level: LevelResult) -> list[object]:
    load, latency, usage = level.measured, level.measured.latency, level.server_usage
    plan = level.plan
    return [
        level.scenario, level.server, level.driver, plan.concurrency, plan.rate or "",
        plan.channels or "", plan.connection, plan.variant, level.repeat, load.count, load.ok,
        ";".join(f"{k}={v}" for k, v in sorted(load.statuses.items()) if k != "OK"),
        round(load.wall_s, 6), latency.max_us / 1000, latency.min_us / 1000,
        round(latency.mean_us / 1000, 3),
        *[latency.percentile_us(p) / 1000 for _, p in PERCENTILES],
        round(load.rps, 2),
        round(usage.cpu_s, 4) if usage else "", usage.peak_rss_bytes if usage else "",
        round(load.client_cpu_s, 4), load.client_saturated,
    ]  # fmt: skip


def render_csv(record: RunRecord) -> bytes:
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(FIELDS)
    writer.writerows(level_row(level) for level in record.levels)
    return text.getvalue().encode()
