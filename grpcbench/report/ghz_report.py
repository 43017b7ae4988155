"""One level as ghz's ``runner.Report`` (v0.120), the model every ghz output format prints.

Durations are integer nanoseconds, the latency distribution is at ghz's seven
percentiles, the histogram has ghz's 11 marks from the fastest to the slowest
call, and errors are keyed as ghz keys them ("rpc error: code = Unavailable
desc = ..."). The percentiles and the histogram come from grpcbench's HDR
histogram (3 significant digits), not from sorting per-call records as ghz does.
``details`` lists each call when the run kept per-call records
(``model.call_details``). ``options`` holds ghz's keys as far as grpcbench
records them: metadata values are masked (they carry credentials), and TLS file
paths are not recorded.
"""

from __future__ import annotations

import json
import os
from typing import Any

from grpcbench.base.go_time import rfc3339, rfc3339_nano
from grpcbench.base.secrets import MASK
from grpcbench.model.results import LevelResult, RecordedOptions

GHZ_PERCENTILES = (10, 25, 50, 75, 90, 95, 99)
HISTOGRAM_MARKS = 11  # ghz's 10 buckets between fastest and slowest, and the slowest
NS_PER_US = 1000


def ghz_error(status: str, message: str) -> str:
    """A failed call's error as a Go gRPC client prints it (ghz's errorDistribution keys)."""
    return f"rpc error: code = {status} desc = {message}"


def detail_error(status: str, message: str) -> str:
    """A per-call record's error: ghz's text for a failed call, empty for OK."""
    return ghz_error(status, message) if status != "OK" else ""


def ghz_error_from_key(key: str) -> str:
    """grpcbench's "Status: message" error key (``load.recorders.error_key``) as ghz's."""
    status, _, message = key.partition(": ")
    return ghz_error(status, message)


def ghz_options(level: LevelResult, options: RecordedOptions) -> dict[str, Any]:
    """ghz's ``runner.Options`` keys, in its order, with its omitempty rules."""
    call = options.call
    settings = options.settings
    schema = str(call.get("schema", ""))
    kind, _, source = schema.partition(" ")
    host = level.server if ":" in level.server else ""
    data = _json_or_text(str(call.get("data", ""))) if call.get("data") else None
    metadata = {key: MASK for key in call.get("metadata_keys", [])}
    fields: list[tuple[str, Any, bool]] = [  # (key, value, omitted when empty)
        ("call", call.get("given") or call.get("method", ""), True),  # as typed, as ghz
        ("host", host, True),
        ("proto", source if kind == "proto" else "", True),
        ("protoset", source if kind == "protoset" else "", True),
        (
            "import-paths",
            _import_paths(source, call.get("import_paths", [])) if kind == "proto" else [],
            True,
        ),
        ("enable-compression", settings.gzip, True),
        ("skipTLS", "--skipTLS" in str(call.get("security", "")), True),
        ("insecure", call.get("security", "plaintext") == "plaintext", False),
        ("authority", settings.authority, True),
        ("rps", int(level.plan.rate), True),
        ("load-schedule", "const", False),
        ("load-start", 0, False),
        ("load-end", 0, False),
        ("load-step", 0, False),
        ("load-step-duration", 0, False),
        ("load-max-duration", 0, False),
        ("concurrency", level.plan.concurrency, True),
        ("concurrency-schedule", "const", False),
        ("concurrency-start", 0, False),
        ("concurrency-end", 0, False),
        ("concurrency-step", 1, False),
        ("concurrency-step-duration", 0, False),
        ("concurrency-max-duration", 0, False),
        ("total", settings.requests, True),
        ("connections", level.measured.connections, True),
        ("duration", round(settings.duration_s * 1e9), True),
        ("timeout", round(settings.timeout_s * 1e9), True),
        ("dial-timeout", round(settings.connect_timeout_s * 1e9), True),
        ("keepalive", round(settings.keepalive_s * 1e9), True),
        ("data", data, True),
        ("binary", False, False),
        ("metadata", metadata, True),
        ("CPUs", options.client_processes, False),
        ("name", options.name, True),
    ]
    return {key: value for key, value, omit_empty in fields if value or not omit_empty}


def _import_paths(proto: str, given: list[str]) -> list[str]:
    """ghz's list (runner.WithProtoFile): the proto's directory unless ".", then ".",
    then -i's paths."""
    directory = os.path.normpath(os.path.dirname(proto) or ".")  # Go's filepath.Dir cleans
    return [*([directory] if directory != "." else []), ".", *given]


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def histogram(level: LevelResult) -> list[dict[str, Any]]:
    """ghz's buckets: 11 marks from fastest to slowest (seconds), each counting the
    calls above the previous mark and at or below its own."""
    latency = level.measured.latency
    if not latency.count:
        return []
    fastest, slowest = latency.min_us, latency.max_us
    step = (slowest - fastest) / (HISTOGRAM_MARKS - 1)
    marks = [fastest + step * i for i in range(HISTOGRAM_MARKS - 1)] + [slowest]
    at_or_below = latency.counts_at_or_below(marks)
    at_or_below[-1] = latency.count  # the slowest mark holds every call
    buckets, below = [], 0
    for mark, total in zip(marks, at_or_below, strict=True):
        count = total - below
        buckets.append({"mark": mark / 1e6, "count": count, "frequency": count / latency.count})
        below = total
    return buckets


def details(level: LevelResult) -> list[dict[str, Any]]:
    """ghz's per-call records, when the run kept them; else none."""
    records = level.measured.details
    if records is None:
        return []
    return [
        {
            "timestamp": rfc3339_nano(started),
            "latency": latency,
            "error": detail_error(status, message),
            "status": status,
        }
        for started, latency, status, message in records.rows()
    ]


def ghz_report(level: LevelResult, options: RecordedOptions) -> dict[str, Any]:
    """The report, with ghz's keys in ghz's order (``date`` first, as its MarshalJSON)."""
    load = level.measured
    latency = load.latency
    report: dict[str, Any] = {"date": rfc3339(level.finished_at)}
    if options.name:
        report["name"] = options.name
    report |= {
        # ghz ends a -z run by its timer: "timeout"; a -n run "normal".
        "endReason": "timeout" if load.truncated or options.settings.duration_s else "normal",
        "options": ghz_options(level, options),
        "count": load.count,
        "total": round(load.wall_s * 1e9),
        "average": round(latency.mean_us * NS_PER_US),
        "fastest": latency.min_us * NS_PER_US,
        "slowest": latency.max_us * NS_PER_US,
        "rps": load.rps,
        "errorDistribution": {ghz_error_from_key(key): n for key, n in load.errors.items()},
        "statusCodeDistribution": dict(load.statuses),
        "latencyDistribution": [
            {"percentage": p, "latency": latency.percentile_us(p) * NS_PER_US}
            for p in GHZ_PERCENTILES
        ]
        if latency.count
        else None,
        "histogram": histogram(level) or None,
        "details": details(level) or None,
    }
    if options.tags:
        report["tags"] = dict(sorted(options.tags.items()))  # a Go map: keys sorted
    return report
