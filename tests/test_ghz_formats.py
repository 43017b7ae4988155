"""ghz's -O formats: a parser written against ghz v0.120's real output reads grpcbench's.

The fixtures in tests/fixtures/ghz_formats are ghz's own output (``ok``: named,
tagged, with metadata; ``deadline``: every call DeadlineExceeded). Each parser
below is what a ghz user's script would do; each test runs it on ghz's output
and on grpcbench's for a level of the same shape and compares what it found.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from grpcbench.model.call_details import CallDetails
from grpcbench.model.plan import LoadSettings
from grpcbench.model.results import RecordedOptions, RunRecord
from grpcbench.report import ghz_formats, ghz_ingest
from grpcbench.report.go_text import go_float, tabwriter
from tests.support.factories import level

FIXTURES = Path(__file__).parent / "fixtures" / "ghz_formats"
START_NS = 1_795_616_707_247_761_636


def ghz_output(case: str, form: str) -> str:
    return (FIXTURES / f"{case}.{form}").read_text(encoding="utf-8")


def record(case: str) -> RunRecord:
    """A level shaped as the fixture's ghz run: 12 OK calls, or 6 DeadlineExceeded."""
    failing = case == "deadline"
    count = 6 if failing else 12
    status = "DeadlineExceeded" if failing else "OK"
    result = level(
        "127.0.0.1:50071", concurrency=2, statuses={status: count},
        latencies_us=[500 + 100 * i for i in range(count)],
    )  # fmt: skip
    details = CallDetails()
    for i in range(count):
        message = "context deadline exceeded" if failing else ""
        details.add(START_NS + i * 1000, (500 + 100 * i) * 1000, status, message)
    load = result.measured
    errors = {"DeadlineExceeded: context deadline exceeded": count} if failing else {}
    result = type(result)(**{
        **result.__dict__,
        "measured": type(load)(**{**load.__dict__, "errors": errors, "details": details}),
    })  # fmt: skip
    options = RecordedOptions(
        settings=LoadSettings(requests=count, timeout_s=1e-6 if failing else 20.0),
        call={
            "method": "helloworld.Greeter/SayHello",
            "schema": "proto /work/main/protos/grpcbench/proto/helloworld.proto",
            "data": '{"name":"x"}',
            "metadata_keys": [] if failing else ["authorization"],
            "security": "plaintext",
        },
        name="" if failing else "nightly run",
        tags={} if failing else {"env": "ci"},
    )
    return RunRecord(options=options, metadata={}, levels=[result])


CASES = ("ok", "deadline")


# -- json and pretty --------------------------------------------------------------


def json_shape(text: str) -> dict[str, Any]:
    report = json.loads(text)
    detail = (report["details"] or [{}])[0]
    return {
        "keys": list(report),
        "option keys": set(report["options"]) - {"import-paths", "metadata"},
        "count": report["count"],
        "statuses": report["statusCodeDistribution"],
        "errors": report["errorDistribution"],
        "percentages": [p["percentage"] for p in report["latencyDistribution"] or ()],
        "detail keys": list(detail),
        "details": len(report["details"] or ()),
        "date": re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", report["date"]) is not None,
        "stamp": re.fullmatch(r"[\d:T-]+\.\d+Z", detail.get("timestamp", "x.1Z")) is not None,
    }


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("form", ["json", "pretty"])
def test_json_reads_as_ghz_s(case: str, form: str) -> None:
    ours = getattr(ghz_formats, f"{form}_text")(record(case))
    theirs = ghz_output(case, form)
    mine, ghz = json_shape(ours), json_shape(theirs)
    if case == "deadline":  # ghz leaves failed calls out of its latency figures
        assert ghz["percentages"] == [] and mine["percentages"] == [10, 25, 50, 75, 90, 95, 99]
        mine["percentages"] = []
        ghz["keys"] = mine["keys"]
    assert mine == ghz
    assert ("\n" in ours) == (form == "pretty") and not ours.endswith("\n")


def test_metadata_values_are_masked_where_ghz_prints_them() -> None:
    assert "s3cret" in ghz_output("ok", "json")
    ours = json.loads(ghz_formats.json_text(record("ok")))
    assert ours["options"]["metadata"] == {"authorization": "***"}


# -- csv ------------------------------------------------------------------------


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.strip("\n"))))


@pytest.mark.parametrize("case", CASES)
def test_csv_is_ghz_s_per_call_csv(case: str) -> None:
    ours, theirs = csv_rows(ghz_formats.csv_text(record(case))), csv_rows(ghz_output(case, "csv"))
    assert ours[0] == theirs[0] == ["duration (ms)", "status", "error"]
    assert len(ours) == len(theirs)
    for mine, ghz in zip(ours[1:], theirs[1:], strict=True):
        assert re.fullmatch(r"\d+\.\d\d", mine[0]) and mine[1:] == ghz[1:]
    assert ghz_formats.csv_text(record(case)).startswith("\nduration (ms)")


# -- summary --------------------------------------------------------------------

SUMMARY_LINE = re.compile(
    r"  (Name|Count|Total|Slowest|Fastest|Average|Requests/sec):\t+(.*)"
    r"|  ([\d.]+) +\[(\d+)\] +\|∎*"
    r"|  (\d+) % in ([\d.]+ (?:ns|ms|s)) "
    r"|  \[(\w+)\] +(\d+) responses +"
    r"|  \[(\d+)\] +(rpc error: .*?) +"
    r"|(Summary:|Response time histogram:|Latency distribution:|Status code distribution:"
    r"|Error distribution:)?"
)


def summary_shape(text: str) -> dict[str, Any]:
    shape: dict[str, Any] = {"fields": [], "buckets": 0, "percentiles": [], "statuses": {},
                             "errors": {}}  # fmt: skip
    for line in text.split("\n"):
        match = SUMMARY_LINE.fullmatch(line)
        assert match, repr(line)
        if match[1]:
            shape["fields"].append(match[1])
        elif match[3]:
            shape["buckets"] += 1
        elif match[5]:
            shape["percentiles"].append(int(match[5]))
        elif match[7]:
            shape["statuses"][match[7]] = int(match[8])
        elif match[9]:
            shape["errors"][match[10]] = int(match[9])
    return shape


@pytest.mark.parametrize("case", CASES)
def test_summary_reads_as_ghz_s(case: str) -> None:
    mine = summary_shape(ghz_formats.summary_text(record(case)))
    ghz = summary_shape(ghz_output(case, "summary"))
    if case == "deadline":  # ghz leaves failed calls out of its histogram
        assert ghz["buckets"] == 0 and mine["buckets"] == 11
        mine["buckets"], mine["percentiles"] = 0, []
    assert mine == ghz


def test_go_formatting() -> None:
    assert [go_float(v) for v in (20.0, 0.5, 1e-06, 1e21, 123.0)] == [
        "20", "0.5", "1e-06", "1e+21", "123"]  # fmt: skip
    assert [go_float(v, exponent_at=6) for v in (12147947.0, 499252.0, 1052570.0, 0.000499252)] == [
        "1.2147947e+07", "499252", "1.05257e+06", "0.000499252"]  # fmt: skip
    assert tabwriter([["  [OK]", "20 responses", ""], ["  [Unavailable]", "3 responses", ""]]) == (
        "  [OK]            20 responses   \n  [Unavailable]   3 responses    \n"
    )
    assert ghz_formats.nano_unit(0) == "0 ns" and ghz_formats.nano_unit(1_500_000) == "1.50 ms"


# -- influx ---------------------------------------------------------------------

INFLUX_LINE = re.compile(r"(\w+),((?:[^ \\]|\\.)+) ((?:[^ \\]|\\.)+) (\d+)")


def influx_shape(text: str) -> list[tuple[str, list[str], list[str]]]:
    shape = []
    for line in text.strip("\n").split("\n"):
        match = INFLUX_LINE.fullmatch(line)
        assert match, line
        keys = [re.split(r"(?<!\\)=", part)[0] for part in re.split(r"(?<!\\),", match[2])]
        fields = [re.split(r"(?<!\\)=", part)[0] for part in re.split(r"(?<!\\),", match[3])]
        shape.append((match[1], keys, fields))
    return shape


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("form", ["influx-summary", "influx-details"])
def test_influx_lines_read_as_ghz_s(case: str, form: str) -> None:
    render = getattr(ghz_ingest, form.replace("-", "_") + "_text")
    mine, ghz = influx_shape(render(record(case))), influx_shape(ghz_output(case, form))
    if case == "deadline" and form == "influx-summary":  # ghz: no latencies of failed calls
        mine = [(m, tags, [f for f in fs if f not in ("median", "p95")]) for m, tags, fs in mine]
    if form == "influx-details":  # one line per call (the runs' counts may differ)
        mine, ghz = sorted(set(map(str, mine))), sorted(set(map(str, ghz)))
    assert mine == ghz
    if form == "influx-details":
        error = "context\\ deadline\\ exceeded" if case == "deadline" else ""
        assert all(line.count(error) for line in render(record(case)).splitlines())


# -- prometheus -----------------------------------------------------------------

SERIES = re.compile(r'(\w+)\{((?:\w+="(?:[^"\\]|\\.)*",?)*)\} (\S+)')


def prometheus_shape(text: str) -> dict[str, Any]:
    types, series = {}, []
    for line in text.strip("\n").split("\n"):
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            types[name] = kind
            continue
        match = SERIES.fullmatch(line)
        assert match, line
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match[2]))
        series.append((match[1], labels.get("le", labels.get("quantile", "")), float(match[3])))
        label_names = sorted(set(labels) - {"le", "quantile"})
    return {"types": types, "names": [s[0] for s in series], "labels": label_names,
            "count": [v for name, _, v in series if name == "ghz_run_count"]}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_prometheus_reads_as_ghz_s(case: str) -> None:
    mine = prometheus_shape(ghz_ingest.prometheus_text(record(case)))
    ghz = prometheus_shape(ghz_output(case, "prometheus"))
    if case == "deadline":  # ghz has no histogram or quantiles without successful calls
        keep = ("ghz_run_histogram_bucket", "ghz_run_latency")
        mine["names"] = [n for n in mine["names"] if n not in keep or n in ghz["names"]]
        names = mine["names"]
        mine["names"] = [
            n
            for i, n in enumerate(names)
            if n not in keep or names[:i].count(n) < ghz["names"].count(n)
        ]
    assert mine == ghz


def test_several_levels_are_one_family_each() -> None:
    run = record("ok")
    second = run.levels[0]
    run.levels.append(type(second)(**{**second.__dict__, "plan": type(second.plan)(4)}))
    text = ghz_ingest.prometheus_text(run)
    assert text.count("# TYPE ghz_run_count gauge") == 1 and text.count("ghz_run_count{") == 2
    assert len(ghz_formats.json_text(run).split("\n")) == 2  # JSON Lines


# -- the same command line, run by ghz and by grpcbench ----------------------------

PARSERS = {
    "json": json_shape, "pretty": json_shape, "summary": summary_shape,
    "influx-summary": influx_shape, "prometheus": prometheus_shape,
    "csv": lambda text: csv_rows(text)[0], "influx-details": lambda text: len(influx_shape(text)),
}  # fmt: skip


@pytest.mark.integration
def test_ghz_s_command_lines_print_what_ghz_prints(tmp_path: Path) -> None:
    """Each -O format, to standard output (no -o) and to -o FILE: ghz's output and
    grpcbench's, from the same command line against one server, read by one parser."""
    import subprocess

    from tests.conftest import GRPCBENCH, module_server
    from tests.test_ghz import ghz_binary

    ghz = ghz_binary()
    proto = Path(__file__).parents[1] / "protos" / "grpcbench" / "proto" / "helloworld.proto"
    with module_server("grpcio-aio", "hello") as address:
        line = ["--insecure", "--proto", str(proto), "--call", "helloworld.Greeter.SayHello",
                "-d", '{"name":"Joe"}', "-n", "40", "-c", "4", "--name", "nightly",
                "--tags", '{"env":"ci"}', address]  # fmt: skip
        for form, parse in PARSERS.items():
            outputs = []
            for tool in ([ghz], [*GRPCBENCH, "run"]):
                done = subprocess.run([*tool, *line, "-O", form], capture_output=True,
                                      text=True, timeout=120, check=False)  # fmt: skip
                assert done.returncode == 0, (form, tool, done.stderr)
                outputs.append(done.stdout)
            theirs, ours = (parse(text) for text in outputs)
            if form in ("json", "pretty"):
                assert ours["details"] == theirs["details"] == 40
            assert ours == theirs, form
        written = tmp_path / "out.csv"
        done = subprocess.run([*GRPCBENCH, "run", *line, "-O", "csv", "-o", str(written)],
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0 and len(csv_rows(written.read_text())) == 41, done.stderr
        assert "Summary" in done.stdout  # the tables stay on standard output with -o


def test_call_details_are_bounded_merge_in_time_order_and_stay_out_of_the_results_file() -> None:
    first, second = CallDetails(limit=3), CallDetails(limit=3)
    for i in range(5):
        first.add(START_NS + 2 * i, 1000, "OK", "")
        second.add(START_NS + 2 * i + 1, 2000, "Unavailable", f"request {i}")
    assert len(first) == 3 and first.dropped == 2
    merged = first.merge(second)
    assert [row[0] - START_NS for row in merged.rows()] == [0, 1, 2, 3, 4, 5]
    assert merged.dropped == 4 and merged.rows()[1][2:] == ("Unavailable", "request 0")
    assert CallDetails.from_json(merged.to_json()).rows() == merged.rows()
    run = record("ok")
    assert run.levels[0].measured.details is not None
    assert run.to_json()["levels"][0]["load"]["details"] is None


def test_only_formats_that_list_calls_keep_per_call_records() -> None:
    from grpcbench.load.recorders import DetailedLevelRecorders, level_recorders
    from grpcbench.run.arguments import RunArgs
    from grpcbench.run.ghz_compat import apply
    from grpcbench.run.ghz_flags import GhzFlags
    from grpcbench.run.options import build_run_options

    def kept(form: str) -> int:
        args = RunArgs(address="127.0.0.1:1", ghz_flags=GhzFlags(output_format=form))
        return build_run_options(apply(args)).settings.call_details

    assert {form: kept(form) for form in ("json", "csv", "summary", "prometheus")} == {
        "json": 1_000_000, "csv": 1_000_000, "summary": 0, "prometheus": 0}  # fmt: skip
    assert type(level_recorders(0)).__name__ == "LevelRecorders"
    assert isinstance(level_recorders(10), DetailedLevelRecorders)


def test_the_call_is_reported_as_typed_and_a_timed_run_ends_by_its_timer() -> None:
    """ghz writes --call as it was given (dotted or with a slash) and ends a -z run with
    endReason "timeout"; a -n run is "normal"."""
    from grpcbench.report.ghz_report import ghz_report
    from tests.support.factories import level

    done = level("127.0.0.1:50071", statuses={"OK": 4})
    dotted = RecordedOptions(call={"method": "helloworld.Greeter/SayHello",
                                   "given": "helloworld.Greeter.SayHello"})  # fmt: skip
    report = ghz_report(done, dotted)
    assert report["options"]["call"] == "helloworld.Greeter.SayHello"
    assert report["endReason"] == "normal"
    old = RecordedOptions(call={"method": "helloworld.Greeter/SayHello"})  # before "given"
    assert ghz_report(done, old)["options"]["call"] == "helloworld.Greeter/SayHello"
    timed = RecordedOptions(call=dotted.call, settings=LoadSettings(duration_s=2, requests=0))
    assert ghz_report(done, timed)["endReason"] == "timeout"
