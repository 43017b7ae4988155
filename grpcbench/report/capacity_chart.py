"""The latency-throughput curve of a capacity run: every server kind on one chart.

Offered rate on x; p99 (solid) and p50 (dashed) of each search probe on a
log y, counted from the intended send time; each SLO's limits drawn as
horizontal lines, and each capacity marked with a star on its p99 (its confirmations' mean):
filled when confirmed on fresh servers, hollow (and said in the legend) when not.
"""

from __future__ import annotations

from typing import Any

from grpcbench.capacity.record import CapacityRecord
from grpcbench.model.results import RunRecord
from grpcbench.report.chart_kit import Chart, finish_chart, legend_outside, log_scale


def capacity_chart(plt: Any, run: RunRecord, record: CapacityRecord) -> Chart:
    figure, axes = plt.subplots(figsize=(8, 4.5))
    for server in dict.fromkeys(p.server for p in record.probes):
        points = {
            p.rate: run.levels[p.level] for p in record.search_probes(server) if p.phase == "search"
        }
        rates = sorted(points)
        if not rates:
            continue
        p99 = [points[r].measured.latency.percentile_us(99) / 1000 for r in rates]
        p50 = [points[r].measured.latency.percentile_us(50) / 1000 for r in rates]
        (line,) = axes.plot(rates, p99, marker="o", label=f"{server} p99")
        axes.plot(rates, p50, marker=".", linestyle="--", color=line.get_color(),
                  label=f"{server} p50")  # fmt: skip
        for found in record.found:
            at = [lv for lv, _ in record.confirmations(run, found)] or (
                [points[found.reported]] if found.reported in points else []
            )
            if found.server == server and found.reported is not None and at:
                mark = sum(lv.measured.latency.percentile_us(99) for lv in at) / len(at) / 1000
                confirmed = found.confirmed is not None
                label = f"{server} capacity ({found.slo}): {found.reported:,.0f}/s" + (
                    "" if confirmed else " (unconfirmed)"
                )
                color = line.get_color()
                axes.plot([found.reported], [mark],
                          marker="*", markersize=14, color=color, linestyle="none",
                          markerfacecolor=color if confirmed else "none",
                          label=label)  # fmt: skip
    for slo in record.settings.slos:
        for objective in slo.objectives:
            axes.axhline(objective.limit_us / 1000, color="grey", linestyle=":", linewidth=1,
                         label=f"SLO {objective.describe()}")  # fmt: skip
    axes.set_xlabel("offered rate (calls/s)")
    axes.set_ylabel("latency (ms), from the intended send")
    log_scale(axes)
    axes.grid(True, alpha=0.3)
    legend_outside(axes)
    return finish_chart(plt, figure, "capacity", "Latency vs offered rate (capacity search)")
