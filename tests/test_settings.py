"""Load settings are declared once (grpcbench.base.declarations): option, help, JSON name,
older files' meaning and check, and everything else reads them from there."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from typer.testing import CliRunner

from grpcbench.base.declarations import declared, from_json, help_for, setting, to_json
from grpcbench.base.errors import UsageError
from grpcbench.model import load_result
from grpcbench.model.connections import parse_connection_strategy
from grpcbench.model.ghz_workers import parse_worker_schedule
from grpcbench.model.load_result import GeneratorJob, Share
from grpcbench.model.plan import LoadSettings
from grpcbench.model.schedule import parse_rate_schedule
from grpcbench.model.think_time import parse_think_time
from grpcbench.run.arguments import RunArgs

NOT_DEFAULT = LoadSettings(
    requests=7, duration_s=1.5, warmup_requests=3, warmup_s=0.5, timeout_s=2.0,
    connections=parse_connection_strategy("pool:3:least-busy"), arrivals="poisson",
    max_in_flight=9, max_level_s=30.0, client_cpus=(1,), call_details=5, client_loop="asyncio",
    client_stack="grpcio", sample_interval_s=0.2, connect_timeout_s=3.0, authority="a.example",
    stall_limit_s=2.5, generator_memory_bytes=1 << 30,
    keepalive_s=5.0, gzip=True, max_recv_bytes=1000, max_send_bytes=100,
    rate_schedule=parse_rate_schedule("step:start=10,step=10,every=1s,end=30"), interval_s=0.5,
    cooldown_s=2.0, client_allocations=50,
    worker_schedule=parse_worker_schedule("ghz:start=2,step=2,every=1s,end=6"),
    duration_stop="close", think_time=parse_think_time("50ms..150ms"),
)  # fmt: skip


def test_every_load_setting_is_declared() -> None:
    assert set(declared(LoadSettings)) == {f.name for f in dataclasses.fields(LoadSettings)}


def test_every_setting_round_trips_through_a_results_file() -> None:
    changed = {
        name for name in declared(LoadSettings)
        if getattr(NOT_DEFAULT, name) != getattr(LoadSettings(), name)
    }  # fmt: skip
    assert changed == set(declared(LoadSettings)), "give every setting a non-default value here"
    assert LoadSettings.from_json(NOT_DEFAULT.to_json()) == NOT_DEFAULT


def test_an_old_file_reads_as_it_meant() -> None:
    old = LoadSettings.from_json({"requests": 200})
    assert (old.client_stack, old.client_loop, old.sample_interval_s) == ("grpcio", "asyncio", 0)


def test_every_check_holds_wherever_settings_are_made() -> None:
    """The CLI, the pytest plugin and the benchmarks all build LoadSettings."""
    for bad, message in (
        ({"requests": -1}, "bad --requests -1: must be at least 0"),
        ({"timeout_s": 0.0}, "bad --timeout 0.0: must be more than 0"),
        ({"client_stack": "h3"}, "bad --client-stack 'h3': wire or grpcio"),
        ({"arrivals": "bursty"}, "bad --arrivals 'bursty': uniform or poisson"),
        ({"max_in_flight": 0}, "bad --max-in-flight 0: must be at least 1"),
    ):
        with pytest.raises(UsageError, match=re.escape(message)):
            LoadSettings(**bad)  # type: ignore[arg-type]


def test_the_cli_shows_each_settings_declared_help() -> None:
    from grpcbench.cli.app import app

    shown = " ".join(
        CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output.split()
    )
    shown = re.sub(r"[│╭╮╰╯─]", " ", shown)
    shown = " ".join(shown.split())
    for name in declared(LoadSettings):
        if LoadSettings.help(name).startswith("(") or name == "call_details":  # (set by -O)
            continue  # the time form of an option whose other form is shown
        words = " ".join(LoadSettings.help(name).split())[:40]
        assert words in shown, (name, words)


def test_a_new_setting_is_one_declaration() -> None:
    """A fake setting added in one place: it serializes, reads back (and from a file that
    predates it), is checked and has its help."""

    @dataclasses.dataclass(frozen=True)
    class WithFake(LoadSettings):
        fake_knob: int = setting(
            3, option="--fake-knob", json="fake_knob", before=1, load=int,
            help="A knob the tests made up (default {default}).",
            check=lambda value: None if value > 0 else "must be positive",
        )  # fmt: skip

    made = WithFake(fake_knob=5)
    assert to_json(made)["fake_knob"] == 5
    assert from_json(WithFake, to_json(made)) == made
    assert from_json(WithFake, {}).fake_knob == 1
    assert help_for(WithFake, "fake_knob") == "A knob the tests made up (default 3)."
    with pytest.raises(UsageError, match="bad --fake-knob 0: must be positive"):
        WithFake(fake_knob=0)


def test_the_pytest_plugin_takes_every_declared_setting_by_name() -> None:
    from grpcbench.cli import pytest_plugin

    given = {
        name: getattr(NOT_DEFAULT, name) for name in declared(LoadSettings)
        # a ramp and workers over time need an open loop (their own tests run them)
        if name not in ("connections", "warmup_requests", "warmup_s", "duration_s", "rate_schedule",
                        "worker_schedule", "think_time")  # think_time: as text, below
    }  # fmt: skip
    made = pytest_plugin.one_level_options(
        "grpclib", concurrency=2, warmup=4, connections="pool:2", **given
    ).settings
    assert made.warmup_requests == 4 and made.connections.size == 2
    thinking = pytest_plugin.one_level_options("grpclib", think_time="50ms..150ms").settings
    assert thinking.think_time == NOT_DEFAULT.think_time
    assert made.client_stack == "grpcio" and made.max_in_flight == 9 and made.client_cpus == (1,)
    assert made.client_allocations == 50
    timed = pytest_plugin.one_level_options("grpclib", duration="2s", warmup="1s", timeout=3)
    assert (timed.settings.requests, timed.settings.duration_s) == (0, 2.0)
    assert (timed.settings.warmup_requests, timed.settings.warmup_s, timed.settings.timeout_s) == (
        0,
        1,
        3,
    )
    with pytest.raises(UsageError, match="unknown option.*reqeusts"):
        pytest_plugin.one_level_options("grpclib", reqeusts=5)
    with pytest.raises(UsageError, match="bad --client-stack"):
        pytest_plugin.one_level_options("grpclib", client_stack="h3")
    with pytest.raises(UsageError, match="one level"):
        pytest_plugin.one_level_options("grpclib", concurrency=[2, 10])
    # A ramp is its own level: the schedule replaces concurrency and the count.
    ramp = pytest_plugin.one_level_options("grpclib", rate_schedule=NOT_DEFAULT.rate_schedule)
    assert (
        ramp.settings.rate_schedule == NOT_DEFAULT.rate_schedule and ramp.settings.duration_s == 3
    )
    assert ramp.levels[0].schedule == "step:start=10,step=10,every=1s,end=30"


def test_a_fake_setting_reaches_the_cli_the_json_and_the_plugin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Declared once, with nothing else edited: `run` has its option (help, panel),
    what is typed reaches the run's settings, and the plugin takes it by name."""
    import typer

    from grpcbench.cli import app as cli
    from grpcbench.cli import commands, pytest_plugin
    from grpcbench.cli.declared_options import settings_options
    from grpcbench.run import levels, options

    @dataclasses.dataclass(frozen=True)
    class WithFake(LoadSettings):
        fake_knob: int = setting(
            3, option="--fake-knob", json="fake_knob", load=int, metavar="N",
            help="A knob the tests made up.", panel="Load model",
            check=lambda value: None if value > 0 else "must be positive",
        )  # fmt: skip

    monkeypatch.setattr(levels, "LoadSettings", WithFake)  # the one class options builds
    made: list[options.RunOptions] = []

    def run_benchmark(args: RunArgs, consoles: object) -> int:
        made.append(options.build_run_options(args))
        return 0

    monkeypatch.setattr(commands, "run_benchmark", run_benchmark)
    app = typer.Typer()
    app.command()(settings_options(WithFake)(cli.run.__wrapped__))  # type: ignore[attr-defined]
    shown = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert "--fake-knob" in shown and "A knob the tests made up. Default: 3." in shown
    result = CliRunner().invoke(app, ["--load", "fake", "-c", "2", "--fake-knob", "5"])
    assert result.exit_code == 0, result.output
    assert made[0].settings.fake_knob == 5  # type: ignore[attr-defined]
    assert WithFake.from_json(made[0].settings.to_json()) == made[0].settings
    bad = CliRunner().invoke(app, ["--load", "fake", "--fake-knob", "0"])
    assert bad.exit_code == 2 and "bad --fake-knob 0: must be positive" in bad.output
    plugin = pytest_plugin.one_level_options("grpclib", load="fake", concurrency=2, fake_knob=7)
    assert plugin.settings.fake_knob == 7  # type: ignore[attr-defined]
    # A Dask worker (or a generator process) gets the level as GeneratorJob's JSON.
    monkeypatch.setattr(load_result, "LoadSettings", WithFake)
    spec = GeneratorJob(
        "127.0.0.1:1", "hello", plugin.levels[0], plugin.settings, Share(2, 10, 0, 1)
    )
    on_worker = GeneratorJob.from_json(json.loads(json.dumps(spec.to_json())))
    assert on_worker.settings.fake_knob == 7  # type: ignore[attr-defined]


def test_a_fake_run_option_reaches_the_cli_the_plugin_and_the_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A `run` option that is not a load setting is one declaration on RunArgs, with
    nothing else edited: `run --help` shows it in its panel, what is typed reaches the
    RunArgs the command gets, the plugin takes it by name, and declared secret, it is
    masked on a saved command line."""
    import typer

    from grpcbench.base import panels
    from grpcbench.base.declarations import option, secret_option_names
    from grpcbench.cli import app as cli
    from grpcbench.cli import commands
    from grpcbench.cli.declared_options import arguments_options, settings_options
    from grpcbench.run import level_options

    @dataclasses.dataclass(frozen=True)
    class WithFakeOption(RunArgs):
        fake_token: str | None = option(
            None, "--fake-token", help="An option the tests made up.", panel=panels.OUTPUT,
            secret=True,
        )  # fmt: skip

    got: list[RunArgs] = []
    monkeypatch.setattr(commands, "run_benchmark", lambda args, consoles: got.append(args) or 0)
    raw_run = cli.run.__wrapped__.__wrapped__  # type: ignore[attr-defined]
    app = typer.Typer()
    app.command()(settings_options(LoadSettings)(arguments_options(WithFakeOption)(raw_run)))
    shown = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert "--fake-token" in shown and "An option the tests made up." in shown
    result = CliRunner().invoke(app, ["--load", "fake", "--fake-token", "s3cret", "-c", "2"])
    assert result.exit_code == 0, result.output
    assert isinstance(got[0], WithFakeOption) and got[0].fake_token == "s3cret"
    assert got[0].concurrency == "2" and got[0].load == "fake"
    monkeypatch.setattr(level_options, "RunArgs", WithFakeOption)
    made = level_options.run_args("grpclib", fake_token="t", concurrency=2)
    assert isinstance(made, WithFakeOption) and made.fake_token == "t"
    assert "--fake-token" in secret_option_names(WithFakeOption)
    assert "--fake-token" not in secret_option_names(RunArgs)
