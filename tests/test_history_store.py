"""The results store, its history and change points, on SQLite (no server needed)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grpcbench.base.errors import UsageError
from grpcbench.cli.app import app
from grpcbench.history.change_points import Point, change_points
from grpcbench.history.database import store_url
from grpcbench.history.history import load_history
from grpcbench.history.series import level_figures, percentile_half_width
from grpcbench.history.store import Store
from grpcbench.model.results import RunRecord
from tests.support.factories import level
from tests.support.stored_results import results

pytest.importorskip("otava")


def test_a_run_is_kept_once_with_its_figures(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    data = results(1000, 1)
    first = store.save("p", data, "a.json")
    again = store.save("p", {**data, "stored": {"run_id": 1}}, "a-copy.json")  # its own file
    assert first.new and not again.new and again.id == first.id
    [run] = store.runs("p")
    assert run.commit == "c0001" and run.host == "h"
    values = store.figure_values("p", [run.id], "p50")
    [(series, by_run)] = values.items()
    assert series == "hello · concurrency 10 · grpclib"
    value, spread, verdict = by_run[run.id]
    assert 950 < value < 1050 and 0 < spread < 20 and verdict
    assert store.projects() == [("p", 1, "2026-01-01T00:01:00.000+00:00")]


def test_runs_are_in_the_order_of_their_instants_whatever_offset_each_was_written_in(
    tmp_path: Path,
) -> None:
    """A run written at +02:00 (a file from another machine) is older than a later UTC
    one, though its text sorts after it."""
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    starts = ["2026-01-01T09:00:00+00:00", "2026-01-01T10:00:00+02:00", "2026-01-01T08:30:00"]
    for number, started_at in enumerate(starts, 1):
        store.save("p", {**results(1000, number), "started_at": started_at}, str(number))
    assert [run.commit for run in store.runs("p")] == ["c0002", "c0003", "c0001"]
    assert store.projects() == [("p", 3, "2026-01-01T09:00:00.000+00:00")]


def test_a_percentile_knows_its_own_uncertainty() -> None:
    """The 95% interval of a p50 of 1,000 calls spread ±20 µs is a few µs wide; of 10
    calls, much wider."""
    many = level("s", latencies_us=[1000 + i % 41 - 20 for i in range(1000)])
    few = level("s", latencies_us=[1000 + i * 4 - 20 for i in range(10)])
    assert percentile_half_width(many, 50) < percentile_half_width(few, 50)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([1, 2], "a JSON list, not an object"),
        ({"tool": "ghz"}, "tool 'ghz'"),
        ({"format_version": 99, "tool": "grpcbench"}, "unsupported results format version 99"),
        ({**results(1000, 1), "started_at": "yesterday"}, "'yesterday' is not an ISO 8601"),
    ],
)
def test_what_is_not_results_is_refused(tmp_path: Path, data: object, reason: str) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    with pytest.raises(UsageError, match=reason):
        store.save("p", data, "x")  # type: ignore[arg-type]
    assert store.projects() == []


@pytest.mark.parametrize(
    "where",
    [
        {"argv": ["grpcbench", "--mongo-uri", "mongodb://u:hunter2@h/db"]},
        {"call_metadata": {"Authorization": "Bearer hunter2"}},
    ],
)
def test_a_credential_in_the_clear_is_refused_and_nothing_stored(
    tmp_path: Path, where: dict[str, object]
) -> None:
    data = results(1000, 1)
    data["metadata"] = {**data["metadata"], **where}  # type: ignore[dict-item]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    with pytest.raises(UsageError, match="credential in the clear") as refused:
        store.save("p", data, "x")
    assert "hunter2" not in str(refused.value)
    assert store.projects() == []


def test_a_password_never_comes_from_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="GRPCBENCH_STORE or PGPASSWORD"):
        store_url("postgresql://u:pw@127.0.0.1/db")
    monkeypatch.setenv("GRPCBENCH_STORE", "postgresql://u:pw@127.0.0.1/db")
    assert store_url(None) == "postgresql://u:pw@127.0.0.1/db"
    with pytest.raises(UsageError, match="bad store URL 'mysql://u:\\*\\*\\*@h/db'"):
        store_url("mysql://u:pw@h/db", from_command_line=False)


def _points(values: list[float], spread: float = 1.0, verdict: str = "server-bound") -> list[Point]:
    return [Point(i, v, spread, verdict) for i, v in enumerate(values)]


def test_a_step_is_found_at_its_run_and_noise_is_not() -> None:
    rng = random.Random(7)
    step = [rng.gauss(100, 3) for _ in range(12)] + [rng.gauss(115, 3) for _ in range(8)]
    [found] = change_points("s", "p50", _points(step), higher_is_better=False)
    assert found.index == 12 and found.worse and found.of_server
    assert found.p_value < 0.001 and 0.1 < found.change < 0.2
    flat = [rng.gauss(100, 3) for _ in range(20)]
    assert change_points("s", "p50", _points(flat), higher_is_better=False) == []


def test_a_change_within_the_runs_own_spread_is_not_one() -> None:
    """Runs that each measured p50 only to ±30 µs: a 15 µs step is their noise."""
    step = [100.0 + (i % 3) * 0.1 for i in range(10)] + [115.0 + (i % 3) * 0.1 for i in range(10)]
    assert change_points("s", "p50", _points(step, spread=1.0), higher_is_better=False)
    assert change_points("s", "p50", _points(step, spread=30.0), higher_is_better=False) == []


def test_a_change_where_the_generator_limited_is_not_the_servers() -> None:
    values = [100.0 + (i % 3) for i in range(10)] + [130.0 + (i % 3) for i in range(10)]
    points = _points(values[:10]) + _points(values[10:], verdict="generator-bound")
    points = [Point(i, p.value, p.spread, p.verdict) for i, p in enumerate(points)]
    [found] = change_points("s", "rps", points, higher_is_better=True)
    assert not found.worse and not found.of_server


def test_history_and_fail_on_regression_from_the_command_line(tmp_path: Path) -> None:
    files = []
    for number in range(1, 21):
        path = tmp_path / f"run{number}.json"
        path.write_text(json.dumps(results(1000 if number < 20 else 1300, number)))
        files.append(str(path))
    url = f"sqlite:///{tmp_path / 'r.db'}"
    runner = CliRunner()
    stored = runner.invoke(app, ["store", *files, "--store", url, "--project", "p"])
    assert stored.exit_code == 0, stored.output
    assert stored.output.count("stored as run") == 20
    history = ["history", "--store", url, "--project", "p"]
    text = runner.invoke(app, history)
    assert text.exit_code == 0 and "regression at run 20 (c0020)" in text.output
    gated = runner.invoke(app, [*history, "--fail-on-regression"])
    assert gated.exit_code == 99, gated.output
    data = json.loads(runner.invoke(app, [*history, "--format", "json"]).stdout)
    assert [run["commit"] for run in data["runs"]] == [f"c{n:04}" for n in range(1, 21)]
    [change] = data["change_points"]
    assert change["run_id"] == data["runs"][-1]["id"] and change["figure"] == "p50"
    assert change["before"] < 1100 < change["after"] and change["p_value"] < 0.001
    older = load_history(Store(url), "p", "p50")
    assert older.newest_regressions() == [c for c in older.change_points if c.index == 19]


def test_a_newest_run_alone_is_unconfirmed_and_the_next_run_confirms_or_clears_it(
    tmp_path: Path,
) -> None:
    """CI fails on the run that starts a regression and, re-run, either fails again
    (confirmed) or passes (a blip: one outlying run is no change)."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    runner = CliRunner()
    history = ["history", "--store", url, "--project", "p"]

    def add(number: int, p50_us: int, project: str = "p") -> None:
        path = tmp_path / f"{project}{number}.json"
        path.write_text(json.dumps(results(p50_us, number)))
        stored = runner.invoke(app, ["store", str(path), "--store", url, "--project", project])
        assert stored.exit_code == 0, stored.output

    def gate() -> tuple[int, str, list[dict[str, object]]]:
        gated = runner.invoke(app, [*history, "--fail-on-regression"])
        data = json.loads(runner.invoke(app, [*history, "--format", "json"]).stdout)
        return gated.exit_code, gated.output, data["change_points"]

    for number in range(1, 21):
        add(number, 1000 if number < 20 else 1300)
    code, said, [change] = gate()
    assert code == 99 and "started by the newest run, unconfirmed" in said, said
    assert change["runs_after"] == 1 and change["confirmed"] is False
    assert "unconfirmed: it rests on one run alone" in runner.invoke(app, history).output
    add(21, 1300)  # re-run: still slower
    code, said, [change] = gate()
    assert code == 99 and "confirmed by the newest" in said, said
    assert change["index"] == 19 and change["runs_after"] == 2 and change["confirmed"]
    add(22, 1300)  # reported twice; from now on the history keeps it, CI passes
    code, said, [change] = gate()
    assert code == 0 and change["index"] == 19 and change["runs_after"] == 3, said
    # The other way: the newest run came back, the slower one was a blip.
    history[-1] = "q"
    for number in range(1, 21):
        add(number, 1000 if number < 20 else 1300, "q")
    assert gate()[0] == 99
    add(21, 1000, "q")
    code, said, changes = gate()
    assert code == 0 and changes == [], changes


def test_a_capacity_run_is_kept_as_its_capacities(tmp_path: Path) -> None:
    from grpcbench.model.results_file import load_run

    record = load_run(Path(__file__).parents[1] / "docs" / "results" / "capacity.json")
    figures = level_figures(record)
    assert {f.figure for f in figures} == {"capacity"}
    assert all(" · p99<=10ms · " in f.series for f in figures)


def test_a_spell_of_quieter_runs_is_not_a_change_but_a_slower_handler_is() -> None:
    """p50s (µs) of real runs on this 2-core machine while another job ran: runs 8-11
    were quieter (a t-test finds them, p = 0.0009), then the handler waited 0.5 ms."""
    real = [774, 671, 748, 694, 686, 778, 628, 428, 425, 585, 609,
            2079, 2002, 1767, 1768, 1760, 1997, 1913, 2271, 2301]  # fmt: skip
    points = _points([float(v) for v in real])
    naive = change_points("s", "p50", points, higher_is_better=False, min_effect=0)
    assert [c.index for c in naive] == [7, 11]
    [found] = change_points("s", "p50", points, higher_is_better=False)
    assert found.index == 11 and found.worse


def test_one_slow_run_before_a_step_does_not_hide_it() -> None:
    """p50s (µs) of the detection test's step series in a fresh-clone CI run: run 2
    was a blip of the machine (flat's run 2 too), then the handler waited 0.5 ms from
    run 12. With the blip counted as scatter, 3x the scatter exceeded the step."""
    real = [861, 2579, 1232, 827, 748, 858, 789, 886, 846, 794, 638,
            1765, 2137, 2147, 1965, 2119, 2111, 2163, 2101, 2019]  # fmt: skip
    [found] = change_points("s", "p50", _points([float(v) for v in real]), False)
    assert found.index == 11 and found.worse
    flat = [1310, 2693, 1091, 824, 782, 655, 863, 846, 855, 773,
            793, 754, 618, 678, 724, 881, 815, 800, 809, 845]  # fmt: skip
    assert change_points("s", "p50", _points([float(v) for v in flat]), False) == []


def test_the_schema_revision_is_alembics_head_and_an_old_store_is_upgraded(
    tmp_path: Path,
) -> None:
    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine, inspect

    from grpcbench.history import database

    config = Config()
    config.set_main_option("script_location", str(Path(database.__file__).parent / "migrations"))
    assert ScriptDirectory.from_config(config).get_current_head() == database.SCHEMA_REVISION
    url = f"sqlite:///{tmp_path / 'old.db'}"
    with create_engine(url).begin() as connection:  # a store of the first schema
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    Store(url).save("p", results(1000, 1), "x")
    assert "analyses" in inspect(create_engine(url)).get_table_names()


def test_an_older_store_gets_every_start_in_utc(tmp_path: Path) -> None:
    """Revision 0003: starts kept as written (any offset, or any text) become UTC; one
    that is not a time becomes the time the run was stored."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, text

    from grpcbench.history import database

    config = Config()
    config.set_main_option("script_location", str(Path(database.__file__).parent / "migrations"))
    url = f"sqlite:///{tmp_path / 'old.db'}"
    with create_engine(url).begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0002")
        connection.execute(text("INSERT INTO projects VALUES (1, 'p', '2026-01-01')"))
        for number, started_at in enumerate(["2026-01-01T10:00:00+02:00", "yesterday"], 1):
            connection.execute(
                text("INSERT INTO runs (id, project_id, started_at, stored_at, kind, status,"
                     " format_version, digest, results) VALUES (:id, 1, :started, :stored,"
                     " 'run', 'complete', 7, :digest, '{}')"),
                {"id": number, "started": started_at, "stored": "2026-01-02T00:00:00.000+00:00",
                 "digest": str(number)},
            )  # fmt: skip
    starts = {run.id: run.started_at for run in Store(url).runs("p")}
    assert starts == {1: "2026-01-01T08:00:00.000+00:00", 2: "2026-01-02T00:00:00.000+00:00"}


def test_change_points_are_kept_until_a_run_is_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grpcbench.history import change_points as module

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    for number in range(1, 21):
        store.save("p", results(1000 if number < 15 else 1400, number), str(number))
    first = load_history(store, "p", "p50")

    def no_detector(*args: object) -> list[object]:
        raise AssertionError("the detector ran again")

    monkeypatch.setattr(module, "_detect", no_detector)
    assert load_history(store, "p", "p50").change_points == first.change_points
    assert load_history(store, "p", "p50", series_filter="nothing").change_points == []
    store.save("p", results(1400, 21), "21")
    with pytest.raises(AssertionError, match="the detector ran again"):
        load_history(store, "p", "p50")


def test_a_project_sees_only_its_own_runs(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    for number in range(1, 6):
        store.save("a", results(1000, number), str(number))
        store.save("b", results(3000, number, seed=1), str(number))
    a, b = load_history(store, "a", "p50"), load_history(store, "b", "p50")
    assert len(a.runs) == len(b.runs) == 5
    [a_points] = a.values.values()
    [b_points] = b.values.values()
    assert (
        set(a_points) == {run.id for run in a.runs}
        and max(p.value for p in a_points.values()) < 1100
    )
    assert (
        set(b_points) == {run.id for run in b.runs}
        and min(p.value for p in b_points.values()) > 2900
    )
    with pytest.raises(UsageError, match="no project 'c'"):
        load_history(store, "c", "p50")


def test_a_kept_run_carries_its_stored_id_in_its_results(tmp_path: Path) -> None:
    """`run --store`: the id printed is the one the results file keeps, the URL masked."""
    from grpcbench.history.options import RunKeeper, StoreTarget

    url = f"sqlite:///{tmp_path / 'r.db'}"
    record = RunRecord.from_json(results(1000, 1))
    said = RunKeeper(StoreTarget(url, "p")).keep(record)
    [run] = Store(url).runs("p")
    assert said == f"stored as run {run.id} of project p in {url}"
    assert record.to_json()["stored"] == {"project": "p", "run_id": run.id, "store": url}
