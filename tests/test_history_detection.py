"""Change points in real runs on this machine, where noise is real (issue 54's goal):
20 runs whose server's handler starts waiting at run 12, and 20 interleaved runs each
of the same server unchanged, twice (flat and its canary). The change must be found
at run 12 (±1); against flat, the only change not the host's; and flat, against its
canary, must show none the code made. (Flat alone may change: a shared machine slows
down too, and the CI runner once did by 37% for the last four runs.) The dashboard,
in Debian's Chromium, must show both. With
GRPCBENCH_REGENERATE_DOCS=docs it regenerates the docs' screenshots, and saves the
step series' results under docs/results/history (the docs' `history` output)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support.dashboard_browser import REGENERATE_ENV, browser_page, dashboard
from tests.support.run_series import Series, found_at, history_json, run_series

pytestmark = pytest.mark.integration


def test_a_slower_handler_is_found_at_its_run_and_nothing_in_the_same_server_unchanged(
    tmp_path: Path,
) -> None:
    pytest.importorskip("otava")
    series = Series()
    url = run_series(series, tmp_path / "runs.db")
    # Alone, the step is found at its run, the server's.
    step = history_json(url, "step")
    assert len(step["runs"]) == series.runs
    assert any(
        abs(at - series.change_at) <= 1 and change["kind"] == "regression" and change["of_server"]
        for at, change in zip(found_at(step), step["change_points"], strict=True)
    ), step["change_points"]
    # Against flat, its control, it is the only change the code made that more than one
    # run shows (any other one, the machine's, is flat's too, or rests on the newest run).
    step = history_json(url, "step", control="flat")
    code_changes = [
        (at, change)
        for at, change in zip(found_at(step), step["change_points"], strict=True)
        if change["kind"] != "host"
    ]
    # One that a single run shows is at the newest run, or beside the step: a run at
    # the step's boundary, between its levels, can be found as a change of its own.
    assert all(
        at == series.runs or abs(at - series.change_at) <= 1
        for at, c in code_changes
        if not c["confirmed"]
    ), code_changes
    code_changes = [(at, change) for at, change in code_changes if change["confirmed"]]
    [(at, change)] = code_changes
    assert abs(at - series.change_at) <= 1 and change["kind"] == "regression", code_changes
    assert change["after"] > change["before"] + 1000 * series.delay_ms / 2
    assert abs(change["control_change"]) < change["change"] / 2
    # The unchanged server: against its own canary, nothing the code made that more
    # than one run shows. A change at the newest run rests on that run alone, which a
    # blip of the machine during it mimics (CI once saw flat's 20th run alone slower,
    # its canary's not): it must say it is unconfirmed (docs/history.md).
    flat = history_json(url, "flat", control="canary")
    assert len(flat["runs"]) == series.runs
    made = [
        (at, change)
        for at, change in zip(found_at(flat), flat["change_points"], strict=True)
        if change["kind"] != "host"
    ]
    assert all(at == series.runs and not change["confirmed"] for at, change in made), made

    # The dashboard shows it: the change point listed and marked on the chart.
    with dashboard(url) as address, browser_page() as page:
        page.goto(address)
        assert page.locator("text=step").count() and page.locator("text=flat").count()
        page.goto(address + "projects/step?figure=p50")
        changes = page.locator("#changes").inner_text()
        assert f"regression at run {at}" in changes, changes
        page.wait_for_selector("canvas")
        assert page.locator(".uplot").count() == 1
        page.goto(address + "projects/flat?figure=p50&control=canary")
        listed = page.locator("#changes").inner_text()
        assert not re.search(rf"(regression|improvement) at run (?!{series.runs}\b)", listed)
        assert f"at run {series.runs} " not in listed or "unconfirmed" in listed, listed
        shots = Path(os.environ.get(REGENERATE_ENV) or tmp_path)
        for project in ("step", "flat"):  # docs/history.md shows step against flat
            _save_series(url, project, shots / "results" / "history")
        page.goto(address)
        page.screenshot(path=str(shots / "history-projects.png"), full_page=True)
        page.goto(address + "projects/step?figure=p50")
        page.wait_for_selector("canvas")
        page.screenshot(path=str(shots / "history-project.png"), full_page=False)
        assert (shots / "history-project.png").stat().st_size > 10_000


def _save_series(url: str, project: str, folder: Path) -> None:
    """The project's results files, numbered in run order, as `grpcbench store` takes them."""
    import json

    from grpcbench.history.store import STORED_KEY, Store

    store = Store(url)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f"{project}-*.json"):
        old.unlink()
    for number, run in enumerate(store.runs(project), 1):
        data = {k: v for k, v in store.results(run.id).items() if k != STORED_KEY}
        (folder / f"{project}-{number:02}.json").write_text(json.dumps(data, indent=2) + "\n")
