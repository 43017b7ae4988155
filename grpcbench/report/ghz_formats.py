"""ghz's output formats (``-O``), printed as ghz v0.120's ``printer`` package prints them.

One level is one ghz report. A run of several levels (ghz runs one) prints one
report per level, one after the other, separated by a blank line, as several
ghz runs would; ``json`` prints one report per line (JSON Lines).
``prometheus`` and ``influx-*`` live in ``ghz_ingest``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grpcbench.model.results import RunRecord
from grpcbench.report.ghz_report import ghz_report
from grpcbench.report.go_text import go_json, tabwriter

BAR = "∎"


def reports(record: RunRecord) -> list[dict[str, Any]]:
    return [ghz_report(level, record.options) for level in record.levels]


def json_text(record: RunRecord) -> str:
    return "\n".join(go_json(report) for report in reports(record))


def pretty_text(record: RunRecord) -> str:
    return "\n".join(go_json(report, indent=True) for report in reports(record))


def csv_text(record: RunRecord) -> str:
    """ghz's per-call CSV (its template, with its leading newline; errors unquoted)."""
    return "".join(
        "\nduration (ms),status,error"
        + "".join(
            f"\n{detail['latency'] / 1e6:4.2f},{detail['status']},{detail['error']}"
            for detail in report["details"] or ()
        )
        + "\n"
        for report in reports(record)
    )


def nano_unit(nanos: int) -> str:
    """ghz's formatNanoUnit."""
    if nanos < 10000:
        return f"{nanos} ns"  # Go's %+v: the plus means field names, not a sign
    millis = nanos / 1e6
    return f"{millis:4.2f} ms" if millis < 1000 else f"{millis / 1000:4.2f} s"


def _histogram_lines(buckets: list[dict[str, Any]]) -> str:
    if not buckets:
        return ""
    max_mark = max(bucket["mark"] for bucket in buckets)
    max_count = max(bucket["count"] for bucket in buckets)
    mark_width = len(f"{max_mark * 1000:.3f}")
    count_width = len(str(max_count))
    lines = []
    for bucket in buckets:
        bar = (bucket["count"] * 40 + max_count // 2) // max_count if max_count else 0
        mark, count = f"{bucket['mark'] * 1000:.3f}", str(bucket["count"])
        lines.append(
            f"  {mark.ljust(mark_width)} [{count}]{' ' * (count_width - len(count))} |{BAR * bar}\n"
        )
    return "".join(lines)


def summary_report(report: dict[str, Any]) -> str:
    """ghz's default template (``-O summary``)."""
    text = "\nSummary:\n"
    if report.get("name"):
        text += f"  Name:\t\t{report['name']}\n"
    text += (
        f"  Count:\t{report['count']}\n"
        f"  Total:\t{nano_unit(report['total'])}\n"
        f"  Slowest:\t{nano_unit(report['slowest'])}\n"
        f"  Fastest:\t{nano_unit(report['fastest'])}\n"
        f"  Average:\t{nano_unit(report['average'])}\n"
        f"  Requests/sec:\t{report['rps']:4.2f}\n"
        "\nResponse time histogram:\n"
        f"{_histogram_lines(report['histogram'] or [])}\n"
        "Latency distribution:"
    )
    for point in report["latencyDistribution"] or ():
        text += f"\n  {point['percentage']} % in {nano_unit(point['latency'])} "
    text += "\n\n"
    if report["statusCodeDistribution"]:
        text += "Status code distribution:\n" + tabwriter(
            [[f"  [{status}]", f"{n} responses", ""]
             for status, n in sorted(report["statusCodeDistribution"].items())]
        )  # fmt: skip
    text += "\n"
    if report["errorDistribution"]:
        text += "Error distribution:\n" + tabwriter(
            [[f"  [{n}]", error, ""] for error, n in sorted(report["errorDistribution"].items())]
        )
    return text


def summary_text(record: RunRecord) -> str:
    return "\n".join(summary_report(report) for report in reports(record))


def encoded(render: Callable[[RunRecord], str]) -> Callable[[RunRecord], bytes]:
    """An exporter's renderer (bytes) from a text renderer."""

    def render_bytes(record: RunRecord) -> bytes:
        return render(record).encode()

    render_bytes.__doc__ = f"{render.__name__} as UTF-8."
    return render_bytes


render_ghz_json = encoded(json_text)
render_ghz_pretty = encoded(pretty_text)
render_ghz_csv = encoded(csv_text)
render_ghz_summary = encoded(summary_text)
