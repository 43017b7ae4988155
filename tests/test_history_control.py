"""A control project (a canary) tells the host's changes from the code's: a change the
control shares over the same time is kind ``host`` and never fails a gate; one it
does not share stays a regression."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grpcbench.cli.app import app
from grpcbench.history.store import Store
from tests.support.stored_results import results

pytest.importorskip("otava")

RUNS = 20
CHANGE_AT = 20  # the first run after the change: the newest, which the gate reads


def _store(tmp_path: Path, project_after: int, control_after: int, offset: str = "") -> str:
    """20 runs of ``p`` and of the control ``c`` interleaved (c 30 s after p), both
    around 1,000 µs until run 20, then ``project_after`` and ``control_after``; the
    control's times written in ``offset``'s zone (+01:00: an hour later on the clock)."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store = Store(url)
    for number in range(1, RUNS + 1):
        late = number >= CHANGE_AT
        store.save("p", results(project_after if late else 1000, number), f"p{number}")
        control = results(control_after if late else 1000, number, seed=1, second=30)
        if offset:
            control["started_at"] = str(control["started_at"]).replace(
                "T00:", "T01:").replace("+00:00", offset)  # fmt: skip
        store.save("c", control, f"c{number}")
    return url


def _history(url: str, *extra: str) -> tuple[int, dict[str, object]]:
    argv = ["history", "--store", url, "--project", "p", "--format", "json", *extra]
    done = CliRunner().invoke(app, [*argv, "--fail-on-regression"])
    return done.exit_code, json.loads(done.stdout)


def test_a_change_the_control_shares_is_the_hosts_and_fails_no_gate(tmp_path: Path) -> None:
    url = _store(tmp_path, project_after=1300, control_after=1250)
    alone, found = _history(url)
    assert alone == 99 and [c["kind"] for c in found["change_points"]] == ["regression"]
    code, found = _history(url, "--control", "c")
    [change] = found["change_points"]
    assert code == 0 and change["kind"] == "host" and change["worse"], change
    assert 0.2 < change["control_change"] < 0.3
    text = CliRunner().invoke(app, ["history", "--store", url, "--project", "p",
                                    "--control", "c"])  # fmt: skip
    assert f"host at run {CHANGE_AT}" in text.output and "the control moved +2" in text.output


def test_runs_are_aligned_by_instant_whatever_offset_their_times_were_written_in(
    tmp_path: Path,
) -> None:
    url = _store(tmp_path, project_after=1300, control_after=1250, offset="+01:00")
    code, found = _history(url, "--control", "c")
    [change] = found["change_points"]
    assert code == 0 and change["kind"] == "host", change


@pytest.mark.parametrize("control_after", [1000, 800, 1050], ids=["flat", "opposite", "small"])
def test_a_change_the_control_does_not_share_stays_a_regression(
    tmp_path: Path, control_after: int
) -> None:
    url = _store(tmp_path, project_after=1300, control_after=control_after)
    code, found = _history(url, "--control", "c")
    [change] = found["change_points"]
    assert code == 99 and change["kind"] == "regression", change
    assert change["control_change"] == pytest.approx(control_after / 1000 - 1, abs=0.02)


def test_a_control_without_the_series_explains_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store = Store(url)
    for number in range(1, RUNS + 1):
        store.save("p", results(1300 if number >= CHANGE_AT else 1000, number), f"p{number}")
        store.save("c", results(1000, number, server="grpcio", second=30), f"c{number}")
    code, found = _history(url, "--control", "c")
    [change] = found["change_points"]
    assert code == 99 and change["kind"] == "regression" and change["control_change"] is None


@pytest.mark.parametrize(
    ("control", "said"),
    [("p", "bad --control 'p': a control is another project"), ("nope", "no project 'nope'")],
)
def test_a_control_that_is_no_other_project_is_one_line(
    tmp_path: Path, control: str, said: str
) -> None:
    url = _store(tmp_path, project_after=1000, control_after=1000)
    done = CliRunner().invoke(app, ["history", "--store", url, "--project", "p",
                                    "--control", control])  # fmt: skip
    assert done.exit_code == 2 and said in done.output and "Traceback" not in done.output
