import csv
from pathlib import Path

import pytest
from rich.console import Console

from grpcbench.model.results import LevelResult, RecordedOptions, RunRecord
from grpcbench.report.console import print_tables
from grpcbench.report.csv_export import FIELDS, render_csv
from grpcbench.report.markdown import run_to_markdown, table_to_markdown
from grpcbench.report.table import build_tables
from tests.support.factories import level


def _rows(table):  # type: ignore[no-untyped-def]
    return {name: cells for name, cells in table.rows}


def test_one_table_per_level_servers_side_by_side() -> None:
    levels = [
        level("grpcio:workers=1", 2), level("grpclib", 2),
        level("grpcio:workers=1", 10), level("grpclib", 10),
    ]  # fmt: skip
    tables = build_tables(levels)
    assert [t.level for t in tables] == ["concurrency 2", "concurrency 10"]
    assert tables[0].columns == ("grpcio:workers=1", "grpclib")
    names = [name for name, _ in tables[0].rows]
    assert names == [
        "Count", "OK", "Total", "Slowest", "Fastest", "Average", "p50", "p90", "p99",
        "p99.9", "Requests/sec", "Server CPU", "Server peak RSS", "Generator CPU",
        "Server CPU / call", "Generator CPU / call", "Verdict",
    ]  # fmt: skip


def test_figures_are_the_measured_ones() -> None:
    rows = _rows(build_tables([level("grpclib", latencies_us=(1000, 2000, 3000, 4000))])[0])
    assert rows["Count"] == ("4",)
    assert rows["Slowest"] == ("4.00 ms",)
    assert rows["Fastest"] == ("1.00 ms",)
    assert rows["Average"] == ("2.50 ms",)
    assert rows["p50"] == ("2.00 ms",)
    assert rows["Requests/sec"] == ("4.00",)
    assert rows["Server CPU"] == ("0.80 s (80%)",)
    assert rows["Server peak RSS"] == ("50.0 MiB",)


def test_every_error_status_gets_a_row_with_zeros_elsewhere() -> None:
    table = build_tables(
        [
            level("a", statuses={"OK": 2, "Unavailable": 2}),
            level("b", statuses={"OK": 3, "DeadlineExceeded": 1}),
        ]
    )[0]
    rows = _rows(table)
    assert rows["OK"] == ("2", "3")
    assert rows["Unavailable"] == ("2", "0")
    assert rows["DeadlineExceeded"] == ("0", "1")
    assert any("2 of 4 calls failed" in note for note in table.notes)


def test_saturated_generator_is_flagged() -> None:
    """Factory levels: server 80% of its core, so the generator decides the verdict."""
    table = build_tables([level("a", client_cpu_s=0.99), level("b", client_cpu_s=0.2)])[0]
    assert _rows(table)["Verdict"] == ("generator-bound ⚠", "neither ⚠")
    assert len([n for n in table.notes if "generator-bound" in n]) == 1
    assert _rows(table)["Generator CPU / call"] == ("247.5 ms", "50.0 ms")


@pytest.mark.parametrize(
    ("server_cpu_s", "client_cpu_s", "verdict"),
    [(0.95, 0.5, "server-bound"), (0.95, 0.95, "both saturated"), (0.5, 0.95, "generator-bound"),
     (0.2, 0.2, "neither")],
)  # fmt: skip
def test_each_verdict_from_both_sides(
    server_cpu_s: float, client_cpu_s: float, verdict: str
) -> None:
    from dataclasses import replace

    measured = level("a", client_cpu_s=client_cpu_s)
    assert measured.server_usage
    measured = replace(measured, server_usage=replace(measured.server_usage, cpu_s=server_cpu_s))
    assert measured.verdict == verdict
    table = build_tables([measured])[0]
    assert _rows(table)["Verdict"][0].startswith(verdict)
    assert any(verdict in note for note in table.notes) == (verdict != "server-bound")


def test_cpu_rows_show_the_shares_the_verdict_counted() -> None:
    """A generator that used 17% of its core and waited 75% for a neighbour's is
    generator-bound, and its row says both shares; a side that did not wait keeps
    its one share."""
    from dataclasses import replace

    measured = level("a", client_cpu_s=0.17)
    waited = replace(
        measured,
        measured=replace(measured.measured, client_wait_s=0.8, client_others_s=0.75),
    )
    assert waited.verdict == "generator-bound"
    rows = _rows(build_tables([waited])[0])
    assert rows["Generator CPU"] == ("0.17 s (17% used, 75% waiting)",)
    assert rows["Server CPU"] == ("0.80 s (80%)",)


def test_a_generator_behind_its_timetable_is_never_neither() -> None:
    """Little CPU used, yet 50 ms late at p99: the offered load was the generator's limit."""
    from dataclasses import replace

    from grpcbench.stats.histogram import LatencyRecorder

    lag = LatencyRecorder()
    for late_us in (50_000,) * 10:
        lag.record(late_us)
    measured = level("a", client_cpu_s=0.2)
    assert measured.verdict == "neither"
    behind = replace(measured, measured=replace(measured.measured, schedule_lag=lag.summary()))
    assert behind.measured.behind_schedule
    assert behind.verdict == "generator-bound"
    assert _rows(build_tables([behind])[0])["Verdict"] == ("generator-bound ⚠",)


def test_verdict_of_repeats_uses_their_means() -> None:
    """One repeat over the threshold, the mean under it: not flagged, and one note at most."""
    column = [level("a", client_cpu_s=0.95), level("a", client_cpu_s=0.5)]
    column = [replace_repeat(lv, i) for i, lv in enumerate(column)]
    table = build_tables(column)[0]
    assert _rows(table)["Verdict"] == ("neither ⚠",)
    assert len([n for n in table.notes if "a:" in n and "neither" in n]) == 1


def replace_repeat(measured, repeat: int):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    return replace(measured, repeat=repeat)


def test_several_drivers_get_their_own_columns() -> None:
    table = build_tables([level("a", driver="builtin"), level("a", driver="fake")])[0]
    assert table.columns == ("a [builtin]", "a [fake]")
    assert any("synthetic" in note for note in table.notes)


def test_markdown_is_the_seed_layout() -> None:
    text = table_to_markdown(build_tables([level("grpclib")])[0])
    lines = text.splitlines()
    assert lines[2] == "|  | grpclib |"
    assert "| Requests/sec | 4.00 |" in lines
    record = RunRecord(
        options=RecordedOptions(), metadata={"python": "3.11"}, levels=[level("grpclib")]
    )
    assert "#### hello - concurrency 10" in run_to_markdown(record)


def test_console_and_csv(tmp_path: Path) -> None:
    console = Console(record=True, width=200)
    print_tables(console, [level("grpclib")])
    assert "Requests/sec" in console.export_text()
    path = tmp_path / "r.csv"
    path.write_bytes(render_csv(RunRecord(RecordedOptions(), {}, levels=[level("grpclib")])))
    rows = list(csv.reader(path.open()))
    assert rows[0] == FIELDS and rows[1][1] == "grpclib" and len(rows) == 2


def test_backing_services_get_rows_and_can_be_the_verdict() -> None:
    from dataclasses import replace

    from grpcbench.observe.monitor import ProcessUsage

    moto = ProcessUsage(cpu_s=0.97, wall_s=1.0, peak_rss_bytes=90 << 20, peak_rss_method="vmhwm")
    measured = replace(level("grpclib", client_cpu_s=0.05), backing_usage={"S3": moto})
    assert measured.verdict == "backing-bound"
    table = build_tables([measured])[0]
    rows = _rows(table)
    assert rows["S3 CPU"] == ("0.97 s (97%)",) and rows["S3 peak RSS"] == ("90.0 MiB",)
    assert rows["Verdict"] == ("backing-bound ⚠",)
    assert any(
        note.endswith(
            "backing-bound: grpclib: the figures are the backing service's limit"
            " (its CPU row shows which)."
        )
        for note in table.notes
    )


@pytest.mark.parametrize("width", [80, 120])
def test_tables_fit_the_terminal_with_whole_headers(width: int) -> None:
    """Six long server labels at 80 and 120 columns: split tables, no truncated header."""
    from grpcbench.base.defaults import SERVERS

    console = Console(width=width, record=True)
    print_tables(console, [level(label) for label in SERVERS])
    text = console.export_text()
    assert all(len(line) <= width for line in text.splitlines())
    for label in SERVERS:
        assert f" {label} " in text, label
    assert "…" not in text
    assert "hello - concurrency 10 (1/" in text  # split, and said so


def test_summary_names_the_best_server_per_level_with_its_verdict() -> None:
    from grpcbench.report.summary import summary_lines

    fast = level("fast", latencies_us=(500, 600, 700, 800))
    slow = level("slow", latencies_us=(5000, 6000, 7000, 8000), client_cpu_s=0.95)
    [line] = summary_lines([fast, slow])
    assert line.startswith("concurrency 10: most req/s")
    assert "lowest p99 fast (0.80 ms, neither)" in line


def test_paginate_vs_stream_ratios_in_the_summary_and_markdown() -> None:
    """Seed 000's conclusion: paginate / stream-fetch-k, per server, from mean latency."""
    from dataclasses import replace

    from grpcbench.model.plan import LevelPlan

    def variant(name: str, latency_us: int) -> object:
        measured = level("grpclib", latencies_us=(latency_us,) * 4, concurrency=1)
        return replace(measured, plan=LevelPlan(1, variant=name))

    levels = [variant("paginate", 3000), variant("stream-fetch-1", 2000),
              variant("stream-fetch-10", 1000)]  # fmt: skip
    record = RunRecord(
        RecordedOptions(scenario="paginate-vs-stream", server_params={"users": 110000}),
        {"python": "3.11"},
        levels=levels,  # type: ignore[arg-type]
    )
    text = run_to_markdown(record)
    assert (
        "- grpclib [builtin]: paginate / stream-fetch-1 1.50x, stream-fetch-10 3.00x"
        " (mean time per call)" in text
    )
    assert "parameters: server users=110000" in text


def test_variant_ratios_leave_out_levels_with_failed_calls() -> None:
    """A fetch-all that hit its deadline has no time to compare (seed 000's large case)."""
    from dataclasses import replace

    from grpcbench.model.plan import LevelPlan
    from grpcbench.report.summary import variant_ratios

    def variant(name: str, latencies: tuple[int, ...], statuses: dict[str, int]) -> LevelResult:
        made = level("grpclib", latencies_us=latencies, statuses=statuses)
        return replace(made, plan=LevelPlan(1, variant=name))

    ok = {"OK": 2}
    levels = [
        variant("paginate", (4000, 4000), ok),
        variant("stream-fetch-1", (2000, 2000), ok),
        variant("stream-fetch-10", (1000, 1000), {"DeadlineExceeded": 2}),
    ]
    (line,) = variant_ratios(levels)
    assert "stream-fetch-1 2.00x" in line and "stream-fetch-10" not in line
    assert variant_ratios([replace(levels[0], measured=levels[2].measured), levels[1]]) == []


def test_the_headline_rate_counts_served_calls_and_names_the_failed_ones() -> None:
    """A target that died answers Unavailable in microseconds: those calls are not its
    rate. The summary ranks by calls served and gives the failed calls their own rate."""
    from dataclasses import replace

    from grpcbench.report.summary import summary_lines

    dying = level("dying", statuses={"OK": 100, "Unavailable": 900})
    dying = replace(dying, measured=replace(dying.measured, wall_s=1.0))
    steady = level("steady", statuses={"OK": 400})
    steady = replace(steady, measured=replace(steady.measured, wall_s=1.0))
    (line,) = summary_lines([dying, steady])
    assert "most req/s steady (400 req/s served" in line
    (alone,) = summary_lines([dying])
    assert "dying (100 req/s served, and 900 failed calls/s" in alone


def test_cluster_workers_show_cpu_over_wall_beside_saturation() -> None:
    """A worker's CPU over its wall time and its saturation are two figures, each
    labelled (saturation also counts what neighbours took: 69% beside 17% of a core)."""
    from dataclasses import replace

    from grpcbench.model.level_parts import WorkerFigures
    from grpcbench.report.table_notes import _column_notes

    busy = WorkerFigures("tcp://127.0.0.1:4001", 1000, wall_s=10.0, cpu_s=1.7, saturation=0.69)
    full = WorkerFigures("tcp://127.0.0.1:4002", 900, wall_s=10.0, cpu_s=9.5, saturation=0.97)
    measured = level("127.0.0.1:1")
    measured = replace(measured, measured=replace(measured.measured, workers=(busy, full)))
    notes = " ".join(_column_notes([measured], "x"))
    assert "tcp://127.0.0.1:4001 1,000 calls, CPU 17% of wall time, saturation 69%" in notes
    assert "tcp://127.0.0.1:4002 was saturated (saturation 97%" in notes
    assert "CPU 95% of wall time" in notes
