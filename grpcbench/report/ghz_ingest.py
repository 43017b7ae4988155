"""ghz's ingestion formats: InfluxDB line protocol (``influx-summary``, ``influx-details``)
and the Prometheus text format (``prometheus``), as ghz v0.120's printer writes them.

They follow ghz where a consumer could notice, including two of its quirks:
``ghz_run_histogram``'s buckets hold each bucket's own count, not a running
total, and its ``_sum`` is the run's wall time; the labels are the report's
options. Go prints map entries in random order; these are sorted.
"""

from __future__ import annotations

from typing import Any

from grpcbench.base.go_time import epoch_ns
from grpcbench.model.results import RunRecord
from grpcbench.report.ghz_formats import encoded, reports
from grpcbench.report.ghz_report import detail_error
from grpcbench.report.go_text import go_float, go_json

_CONSTANT_SCHEDULE_KEYS = (
    "load-start", "load-end", "load-step", "load-step-duration", "load-max-duration",
    "concurrency-start", "concurrency-end", "concurrency-step", "concurrency-step-duration",
    "concurrency-max-duration", "load-schedule", "concurrency-schedule",
)  # fmt: skip


def _clean(text: str) -> str:
    """ghz's cleanInfluxString."""
    return text.replace(" ", "\\ ").replace(",", "\\,").replace("=", "\\=")


def _quoted_json(value: Any) -> str:
    """A value as JSON, then that JSON as a JSON string, cleaned (ghz's data= tag)."""
    return _clean(go_json(go_json(value)))


def _quoted_json_or_empty(value: Any) -> str:
    return _quoted_json(value) if value else '""'


def _seconds(nanos: int) -> str:
    return go_float(nanos / 1e9)


def _influx_tags(report: dict[str, Any], with_errors: bool) -> str:
    options = report["options"]
    tags = []
    if report.get("name"):
        tags.append(f'name="{_clean(report["name"].strip())}"')
    if options.get("proto"):
        tags.append(f'proto="{options["proto"]}"')
    elif options.get("protoset"):
        tags.append(f'Protoset="{options["protoset"]}"')
    tags += [
        f'call="{options.get("call", "")}"',
        f'host="{options.get("host", "")}"',
        f"n={options.get('total', 0)}",
        f"c={options.get('concurrency', 0)}",
        f"rps={options.get('rps', 0)}",
        f"z={options.get('duration', 0)}",
        f"timeout={_seconds(options.get('timeout', 0))}",
        f"dial_timeout={_seconds(options.get('dial-timeout', 0))}",
        f"keepalive={_seconds(options.get('keepalive', 0))}",
        "data=" + _quoted_json_or_empty(options.get("data")),
        "metadata=" + _quoted_json_or_empty(options.get("metadata")),
        "tags=" + _quoted_json_or_empty(report.get("tags")),
    ]
    if with_errors:
        errors = sum(report["errorDistribution"].values())
        tags += [f"errors={errors}", f"has_errors={'true' if errors else 'false'}"]
    return ",".join(tags)


def _percentile(report: dict[str, Any], percentage: int) -> int | None:
    for point in report["latencyDistribution"] or ():
        if point["percentage"] == percentage:
            return int(point["latency"])
    return None


def influx_summary_report(report: dict[str, Any], date_ns: int) -> str:
    fields = [
        f"count={report['count']}", f"total={report['total']}",
        f"average={report['average']}", f"fastest={report['fastest']}",
        f"slowest={report['slowest']}", f"rps={report['rps']:4.2f}",
    ]  # fmt: skip
    for name, percentage in (("median", 50), ("p95", 95)):
        value = _percentile(report, percentage)
        if value is not None:
            fields.append(f"{name}={value}")
    fields.append(f"errors={sum(report['errorDistribution'].values())}")
    return f"ghz_run,{_influx_tags(report, True)} {','.join(fields)} {date_ns}"


def influx_summary_text(record: RunRecord) -> str:
    return "\n".join(
        influx_summary_report(report, epoch_ns(level.finished_at))
        for report, level in zip(reports(record), record.levels, strict=True)
    )


def influx_details_text(record: RunRecord) -> str:
    lines = []
    for report, level in zip(reports(record), record.levels, strict=True):
        tags = _influx_tags(report, False)
        details = level.measured.details
        for started, latency, status, message in details.rows() if details else ():
            error = detail_error(status, message)
            lines.append(
                f"ghz_detail,{tags},hasError={'true' if error else 'false'}"
                f' latency={latency},error="{_clean(error)}",status="{status}" {started}\n'
            )
    return "".join(lines)


def _labels(report: dict[str, Any]) -> dict[str, str]:
    """ghz's getCommonPrometheusLabels: the options as strings, name and end_reason."""
    options = dict(report["options"])
    labels = {"name": report.get("name", ""), "end_reason": report["endReason"]}
    for key, value in options.items():
        if key in ("data", "metadata") or key in _CONSTANT_SCHEDULE_KEYS:
            continue
        labels[key] = "true" if value is True else "false" if value is False else str(value)
    for key, default in (
        ("skipTLS", "false"), ("async", "false"), ("binary", "false"), ("skipFirst", "0"),
        ("count-errors", "false"), ("rps", "0"), ("duration", "0"), ("keepalive", "0"),
        ("import-paths", ""),
    ):  # fmt: skip
        labels.setdefault(key, default)
    return {key.replace("-", "_"): value for key, value in sorted(labels.items())}


def _series(name: str, labels: dict[str, str], value: float) -> str:
    text = ",".join(f'{key}="{_escape_label(value)}"' for key, value in labels.items())
    return f"{name}{{{text}}} {go_float(value, exponent_at=6)}\n"


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def prometheus_families(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(family, type, series lines) of one report, in ghz's order."""
    labels = _labels(report)
    families = [
        (f"ghz_run_{name}", "gauge", _series(f"ghz_run_{name}", labels, value))
        for name, value in (
            ("count", report["count"]), ("total", report["total"]),
            ("average", report["average"]), ("fastest", report["fastest"]),
            ("slowest", report["slowest"]), ("rps", report["rps"]),
        )
    ]  # fmt: skip
    buckets = "".join(
        _series(
            "ghz_run_histogram_bucket",
            {**labels, "le": go_float(bucket["mark"], exponent_at=6)},
            bucket["count"],
        )
        for bucket in report["histogram"] or ()
    )
    buckets += _series("ghz_run_histogram_bucket", {**labels, "le": "+Inf"}, report["count"])
    buckets += _series("ghz_run_histogram_sum", labels, report["total"])
    buckets += _series("ghz_run_histogram_count", labels, report["count"])
    families.append(("ghz_run_histogram", "histogram", buckets))
    quantiles = "".join(
        _series(
            "ghz_run_latency",
            {**labels, "quantile": go_float(point["percentage"] / 100, exponent_at=6)},
            point["latency"],
        )
        for point in report["latencyDistribution"] or ()
    )
    quantiles += _series("ghz_run_latency_sum", labels, report["total"])
    quantiles += _series("ghz_run_latency_count", labels, report["count"])
    families.append(("ghz_run_latency", "summary", quantiles))
    errors = sum(report["errorDistribution"].values())
    families.append(("ghz_run_errors", "gauge", _series("ghz_run_errors", labels, errors)))
    return families


def prometheus_text(record: RunRecord) -> str:
    """Every level's series under one ``# TYPE`` line per family (a family may not
    be declared twice in one exposition)."""
    merged: dict[str, tuple[str, str]] = {}
    for report in reports(record):
        for family, kind, lines in prometheus_families(report):
            merged[family] = (kind, merged.get(family, (kind, ""))[1] + lines)
    return "".join(f"# TYPE {family} {kind}\n{lines}" for family, (kind, lines) in merged.items())


render_ghz_influx_summary = encoded(influx_summary_text)
render_ghz_influx_details = encoded(influx_details_text)
render_ghz_prometheus = encoded(prometheus_text)
