"""Repeats, `show` and `compare` on stored results files (including an early v1 file)."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.model.results import RecordedOptions, RunRecord
from grpcbench.model.results_file import load_run
from grpcbench.report.compare import compare_runs, parse_fail_on, regressions
from grpcbench.report.figures import Spread
from grpcbench.report.table import build_tables
from tests.conftest import GRPCBENCH
from tests.support.factories import level

RESULTS = Path(__file__).parent / "fixtures" / "results"


def _record(server: str, latencies: list[tuple[int, ...]]) -> RunRecord:
    """One repeat per latency tuple; 4 calls each, so Requests/sec = 4 per wall second."""
    from dataclasses import replace

    levels = [
        replace(level(server, latencies_us=values), repeat=index)
        for index, values in enumerate(latencies)
    ]
    return RunRecord(options=RecordedOptions(), metadata={}, levels=levels)


def test_spread() -> None:
    spread = Spread.of([10.0, 12.0, 14.0])
    assert spread.mean == 12.0 and spread.stdev == pytest.approx(2.0) and spread.unstable
    assert Spread.of([10.0, 10.1, 9.9]).unstable is False
    assert Spread.of([5.0]).format(lambda v: f"{v:.1f}") == "5.0"
    assert Spread.of([4.0, 6.0]).format(lambda v: f"{v:.1f}") == "5.0 ± 1.4"


def test_repeats_share_a_column_with_mean_and_spread() -> None:
    record = _record("grpclib", [(1000,) * 4, (3000,) * 4, (2000,) * 4])
    (table,) = build_tables(record.levels)
    assert table.columns == ("grpclib",)
    rows = dict(table.rows)
    assert rows["Count"] == ("4",)  # identical over repeats: no ± shown
    assert rows["Average"] == ("2.00 ms ± 1.00 ms",)
    assert any("unstable over 3 repeats" in note and "Average 50%" in note for note in table.notes)


def test_compare_ratio_and_significance() -> None:
    a = _record("s", [(1000,) * 4, (1010,) * 4, (990,) * 4])
    b = _record("s", [(2000,) * 4, (2020,) * 4, (1980,) * 4])
    by_figure = {d.figure.key: d for d in compare_runs(a, b)}
    p50 = by_figure["p50"]
    assert p50.ratio == pytest.approx(2.0, rel=0.01)
    assert p50.significant is True and not p50.better
    assert by_figure["rps"].significant is False  # Requests/sec did not change
    single = compare_runs(_record("s", [(1000,) * 4]), _record("s", [(2000,) * 4]))
    assert {d.significant for d in single} == {None}


def test_fail_on_thresholds() -> None:
    a = _record("s", [(1000,) * 4])
    b = _record("s", [(1200,) * 4])
    differences = compare_runs(a, b)

    def failed(text: str) -> list[str]:
        return regressions(differences, parse_fail_on(text), require_significance=False).failed

    assert failed("p99:+10%") != []
    assert failed("p99:+25%") == []
    assert failed("rps:-5%") == []
    # One run a side: beyond the threshold, but nothing to test significance with.
    gate = regressions(differences, parse_fail_on("p99:+10%"))
    assert gate.failed == [] and len(gate.untestable) == 1
    for bad in ("rps", "rps:5", "speed:+5%", "rps:x%", "rps:0%"):
        with pytest.raises(UsageError, match="--fail-on"):
            parse_fail_on(bad)


def test_nothing_in_common_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="nothing|no scenario"):
        compare_runs(_record("a", [(1,) * 4]), _record("b", [(1,) * 4]))


def test_stored_files_load_including_an_early_v1_file() -> None:
    early = load_run(RESULTS / "early_v1.json")
    assert len(early.levels) == 12 and early.levels[0].repeat == 0
    assert early.levels[0].measured.cpu_cores == 1.0  # field added later: default applies
    repeated = load_run(RESULTS / "repeat3_a.json")
    assert {lv.repeat for lv in repeated.levels} == {0, 1, 2}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GRPCBENCH, *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.integration
def test_show_and_compare_on_the_command_line() -> None:
    shown = _cli("show", str(RESULTS / "early_v1.json"))
    assert shown.returncode == 0 and "hello - concurrency 50" in shown.stdout
    markdown = _cli("show", str(RESULTS / "repeat3_a.json"), "--markdown")
    assert "| Requests/sec | " in markdown.stdout and " ± " in markdown.stdout
    a, b = str(RESULTS / "repeat3_a.json"), str(RESULTS / "repeat3_b.json")
    same = _cli("compare", a, a, "--fail-on", "rps:-5%,p99:+10%")
    assert same.returncode == 0 and "grpclib [builtin]: Requests/sec" in same.stdout
    assert "1.00x (same, significant)" not in same.stdout
    # B's Requests/sec is ~10% lower in these files, with a spread as large (3 repeats):
    # beyond the threshold, but not significant, so not a regression...
    different = _cli("compare", a, b, "--fail-on", "rps:-5%")
    assert different.returncode == 0, different.stderr
    assert "not significant, p=" in different.stdout
    # ...unless the threshold alone is asked for.
    ungated = _cli("compare", a, b, "--fail-on", "rps:-5%", "--no-significance")
    assert ungated.returncode == 1
    assert "regression:" in ungated.stderr and "Traceback" not in ungated.stderr
    as_json = json.loads(_cli("compare", a, b, "--format", "json").stdout)
    assert {"where", "figure", "ratio", "p_value", "significant"} <= set(as_json[0])
    as_markdown = _cli("compare", a, b, "--format", "markdown").stdout
    assert as_markdown.startswith("| where | figure | A | B | B / A | p | verdict |")
    bad = _cli("compare", a, str(RESULTS / "missing.json"))
    assert bad.returncode == 2 and "cannot read results file" in bad.stderr


@pytest.mark.integration
def test_show_compare_and_report_read_format_1_and_format_2(tmp_path: Path) -> None:
    """The commands read today's files and every older format, side by side."""
    from grpcbench.base.output_files import write_atomically
    from grpcbench.report.json_export import results_bytes

    old = RESULTS / "repeat3_a.json"
    new = tmp_path / "repeat3_b_v2.json"
    write_atomically(new, results_bytes(load_run(RESULTS / "repeat3_b.json").to_json()))
    assert json.loads(new.read_text())["format_version"] == 2

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*GRPCBENCH, *args], capture_output=True, text=True, timeout=120, check=False
        )

    for path in (old, new):
        shown = run("show", str(path))
        assert shown.returncode == 0 and "Requests/sec" in shown.stdout, shown.stderr
    compared = run("compare", str(old), str(new))
    assert compared.returncode == 0 and "Requests/sec" in compared.stdout, compared.stderr
    reported = run("report", str(new), "--html", str(tmp_path / "r.html"))
    assert reported.returncode == 0, reported.stderr
    assert "<svg" in (tmp_path / "r.html").read_text()


def _gate_fires(rng: random.Random, n: int, shift: float, noise: float) -> bool:
    """One synthetic trial: n repeats a side of Requests/sec, B shifted by ``shift``."""
    from grpcbench.report.compare import ChangeLimit, Difference, Spread
    from grpcbench.report.figures import FIGURES

    a = [rng.gauss(1000.0, 1000.0 * noise) for _ in range(n)]
    b = [rng.gauss(1000.0 * (1 + shift), 1000.0 * noise) for _ in range(n)]
    difference = Difference("synthetic", FIGURES["rps"], Spread.of(a), Spread.of(b))
    gate = regressions([difference], [ChangeLimit(FIGURES["rps"], -0.05)])
    return bool(gate.failed)


@pytest.mark.parametrize("n", [3, 5, 10])
def test_gate_false_positive_rate_is_at_most_alpha(n: int) -> None:
    """200 trials of identical distributions: the gate fires at most at alpha = 5%."""
    rng = random.Random(1000 + n)
    fired = sum(_gate_fires(rng, n, shift=0.0, noise=0.05) for _ in range(200))
    assert fired / 200 <= 0.05


def test_gate_catches_a_true_20_percent_regression() -> None:
    rng = random.Random(7)
    caught = sum(_gate_fires(rng, 5, shift=-0.20, noise=0.05) for _ in range(200))
    assert caught / 200 >= 0.90
