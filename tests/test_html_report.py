"""Charts and the offline HTML report, from stored results (one with errors, one streaming)."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from grpcbench.base.output_files import write_atomically
from grpcbench.model.results_file import load_run
from grpcbench.report.charts import render_charts, write_images
from grpcbench.report.html import render_html, run_to_html
from tests.conftest import GRPCBENCH
from tests.support.dashboard_browser import chromium_path

RESULTS = Path(__file__).parent / "fixtures" / "results"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.mark.integration
def test_charts_show_errors_and_every_level() -> None:
    record = load_run(RESULTS / "with_errors.json")
    charts = render_charts(record)
    names = [chart.name for chart in charts]
    assert names[:2] == ["throughput", "latency-percentiles"]
    assert names.count("distribution-1") == 1 and "distribution-2" in names  # levels 2 and 4
    assert "server-resources" in names
    throughput = charts[0].svg
    assert "58 errors" in throughput  # the failed calls are drawn, not hidden
    assert all(chart.png.startswith(b"\x89PNG") for chart in charts)


@pytest.mark.integration
def test_streaming_results_get_stream_charts(tmp_path: Path) -> None:
    charts = render_charts(load_run(RESULTS / "streaming.json"))
    names = {chart.name for chart in charts}
    assert {"stream-messages", "first-message"} <= names
    written = write_images(charts, tmp_path, ["png", "svg"])
    assert len(written) == 2 * len(charts) and all(p.stat().st_size > 1000 for p in written)


@pytest.mark.integration
def test_html_is_self_contained_and_holds_tables_and_charts(tmp_path: Path) -> None:
    record = load_run(RESULTS / "with_errors.json")
    page = run_to_html(record, render_charts(record))
    assert page.count("<svg") == len(render_charts(record))
    assert "DeadlineExceeded" in page and "hello-errors - concurrency 4" in page
    assert "grpcio 1.85.1" in page  # metadata
    # Offline: nothing is fetched from anywhere.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


@pytest.mark.integration
def test_report_command(tmp_path: Path) -> None:
    result = subprocess.run(
        [*GRPCBENCH, "report", str(RESULTS / "streaming.json"), "--html", str(tmp_path / "r.html"),
         "--png", str(tmp_path / "png")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "r.html").stat().st_size > 10_000
    assert len(list((tmp_path / "png").glob("*.png"))) >= 5
    nothing = subprocess.run(
        [*GRPCBENCH, "report", str(RESULTS / "streaming.json")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert nothing.returncode == 2 and "nothing to write" in nothing.stderr


@pytest.mark.integration
def test_report_renders_its_charts_in_headless_chromium(tmp_path: Path) -> None:
    chromium = chromium_path()
    record = load_run(RESULTS / "with_errors.json")
    charts = render_charts(record)
    page = tmp_path / "report.html"
    write_atomically(page, render_html(record, charts))
    common = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [*common, "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    # The page's own script counts the charts that have a drawn size.
    assert f"<title>charts: {len(charts)} rendered of {len(charts)}</title>" in dom.stdout
    # The headline summary is at the top, before the charts, and names each level.
    headline = dom.stdout.index('id="headline"')
    assert headline < dom.stdout.index('class="chart"')
    assert "concurrency 2: most req/s" in dom.stdout
    # Points that are not server-bound are marked, and the legend says what that means.
    assert "hollow: not server-bound (see Verdict)" in dom.stdout
    # Every chart is in the page, by its title.
    for chart in charts:
        assert f'title="{chart.title}"' in dom.stdout, chart.title
    # Kept under the test's tmp dir (pytest keeps the last runs' tmp dirs): CI's artifact.
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*common, "--window-size=1280,2400", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 50_000


def _profiled_record(tmp_path: Path):  # type: ignore[no-untyped-def]
    """The stored run with a profile on every level: the server burns in ``burn`` on
    odd levels only, so a search for it matches some graphs and not others."""
    record = load_run(RESULTS / "with_errors.json")
    levels = []
    for index, level in enumerate(record.levels):
        stacks = tmp_path / f"cell{index}.folded"
        leaf = "burn (app/work.py:9)" if index % 2 else "idle (app/work.py:3)"
        stacks.write_text(
            f'process 1:"python";main (app/main.py:1);_serve (grpc/_server.py:5);{leaf} 70\n'
            'process 1:"python";main (app/main.py:1);_run_once (asyncio/base_events.py:2) 30\n'
        )
        profile = {"file": str(stacks), "rate_hz": 100, "samples": 100, "top": []}
        levels.append(replace(level, profile=profile))
    record.levels[:] = levels
    return record


def test_report_draws_a_flame_graph_per_profiled_cell_with_search(tmp_path: Path) -> None:
    chromium = chromium_path()
    record = _profiled_record(tmp_path)
    page = tmp_path / "report.html"
    write_atomically(page, render_html(record, charts=[]))
    cells = len(record.levels)
    burning = sum(1 for index in range(cells) if index % 2)
    dom = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=5000", "--dump-dom", page.as_uri() + "#flame-search=burn"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert f'data-flamegraphs="{cells} drawn of {cells}"' in dom.stdout
    # The search from the address ran in every graph: `burn` is 70% of the burning cells.
    assert dom.stdout.count("matched: 70.0% of samples (1 box)") == burning
    assert dom.stdout.count("matched: 0.0% of samples (0 boxes)") == cells - burning
    assert dom.stdout.count('class="flame-box match"') == burning
    # Library frames are folded into one box each, and the process frame is short.
    assert ">[grpcio internals]</div>" in dom.stdout and ">process 1</div>" in dom.stdout


def test_a_report_without_its_stack_files_says_so(tmp_path: Path) -> None:
    record = _profiled_record(tmp_path)
    for level in record.levels:
        Path(level.profile["file"]).unlink()
    page = run_to_html(record, [])
    assert page.count("Its collapsed-stack file is gone") == len(record.levels)
    assert 'class="flame"' not in page
