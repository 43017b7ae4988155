"""A run's levels and the load settings of each: the scenario's size, warm-up and
deadline, then what was given; and every level of a column (loads x swept channel
counts x variants)."""

from __future__ import annotations

from typing import Any

from grpcbench.base import defaults
from grpcbench.base.declarations import parse_values
from grpcbench.base.errors import UsageError
from grpcbench.model.level_scenarios import level_plan
from grpcbench.model.plan import NO_TIMEOUT, LevelPlan, LoadSettings
from grpcbench.model.scenario import Scenario
from grpcbench.run.arguments import RunArgs


def load_settings(args: RunArgs, scenario: Scenario) -> LoadSettings:
    """The scenario's size, warm-up and deadline, then what was given, through the
    settings' declarations (the same for the command line and the pytest plugin)."""
    given = parse_values(LoadSettings, {k: v for k, v in args.settings.items() if v is not None})
    if "requests" in given and given.get("duration_s"):
        raise UsageError("give either --requests or --duration, not both")
    scenario_values = parse_values(
        LoadSettings,
        {
            "requests": scenario.requests,
            "warmup": scenario.warmup,
            "timeout": scenario.timeout,
            "client_loop": defaults.CLIENT_LOOP,  # uvloop where it is installed
        },
    )
    values = {**scenario_values, **given}
    schedule = values.get("rate_schedule")
    # The level lasts a step: or line: schedule (a shape of a plugin's too, unless it says).
    if schedule is not None and getattr(schedule, "sets_level_length", True):
        if "requests" in given or given.get("duration_s"):
            raise UsageError(
                f"--rate-schedule sets the level's length ({schedule.duration_s:g} s):"
                " drop --requests/--duration"
            )
        values["duration_s"] = schedule.duration_s
    if values.get("duration_s"):
        values["requests"] = 0
        _level_runs_its_duration(values, "max_level_s" in given, schedule is not None)
    if values.get("timeout_s") == NO_TIMEOUT:  # -t 0: a call may take the whole level
        values["timeout_s"] = values.get("max_level_s", LoadSettings().max_level_s)
    return LoadSettings(**values)


def _level_runs_its_duration(values: dict[str, Any], limit_given: bool, schedule: bool) -> None:
    """A level given a time (-z, a rate schedule) runs that time: the level's time limit
    (--max-level, 300 s unless given) rises to it, or, given shorter, is refused."""
    duration = values["duration_s"]
    limit = values.get("max_level_s", LoadSettings().max_level_s)
    if duration <= limit:
        return
    if limit_given:
        what = "--rate-schedule lasts" if schedule else "--duration is"
        raise UsageError(
            f"{what} {duration:g} s, longer than --max-level ({limit:g} s): raise --max-level"
        )
    values["max_level_s"] = duration


def level_plans(args: RunArgs, scenario: Scenario, load: LoadSettings) -> tuple[LevelPlan, ...]:
    """Every level of a column: loads x swept channel counts x variants."""
    if scenario.level_scenarios:
        return (_scenarios_level(args, scenario, load),)
    channel_counts = args.value("channels") if args.channels else ()
    if channel_counts and load.connections.mode != "auto":
        raise UsageError("--channels sweeps pool sizes; do not combine it with --connections")
    rates = args.value("rate") if args.rate else ()
    schedule = load.rate_schedule
    if schedule is not None and (rates or args.concurrency is not None):
        raise UsageError(
            "--rate-schedule is the level's rate: drop --rate/--concurrency (cap calls in"
            " flight with --max-in-flight)"
        )
    if schedule is not None:
        rates = (schedule.peak,)
    if load.worker_schedule is not None and not rates:
        raise UsageError(
            "--worker-schedule sets an open loop's workers: give --rate or --rate-schedule"
            " (on a ghz line, --concurrency-schedule needs --rps or --load-schedule)"
        )
    if rates and load.think_time is not None:
        raise UsageError("--think-time is a closed loop's users' pause: an open loop (--rate)"
                         " sends at its rate, after no user")  # fmt: skip
    if rates and load.connections.mode == "per-user":
        raise UsageError("--connections per-user gives each virtual user a connection: a closed"
                         " loop; an open loop (--rate) has no users")  # fmt: skip
    if rates and args.concurrency is not None:
        raise UsageError(
            "--rate replaces --concurrency (open loop); cap calls in flight with --max-in-flight"
        )
    concurrency = (
        args.value("concurrency") if args.concurrency is not None else scenario.concurrency
    )
    loads = (
        [(load.max_in_flight, rate) for rate in rates]
        if rates
        else [(level, 0.0) for level in concurrency]
    )
    variants = [variant.name for variant in scenario.variants] or [""]
    return tuple(
        LevelPlan(
            level,
            channels,
            rate,
            variant,
            load.connection_label(channels),
            schedule.text if schedule else "",
        )  # fmt: skip
        for level, rate in loads
        for channels in channel_counts or (0,)
        for variant in variants
    )


def _scenarios_level(args: RunArgs, scenario: Scenario, load: LoadSettings) -> LevelPlan:
    """[[scenarios]] make one level: each sets its own load, so nothing else may."""
    given = [
        option
        for option, asked in (
            ("--concurrency", args.concurrency is not None),
            ("--rate", bool(args.rate)),
            ("--rate-schedule", load.rate_schedule is not None),
            ("--channels", bool(args.channels)),
            ("--worker-schedule", load.worker_schedule is not None),
        )
        if asked
    ]
    if given:
        raise UsageError(
            f"the scenario file's [[scenarios]] each set their own load (concurrency or rate):"
            f" drop {given[0]}"
        )
    if scenario.variants:
        raise UsageError("[[scenarios]] and [[variants]] do not mix: one level runs the scenarios")
    open_loops = [s.name for s in scenario.level_scenarios if s.rate]
    if open_loops and load.think_time is not None:
        raise UsageError(
            f"--think-time is a closed loop's users' pause: scenario {open_loops[0]!r} sends at"
            " its rate, after no user"
        )
    if open_loops and load.connections.mode == "per-user":
        raise UsageError(
            f"--connections per-user gives each virtual user a connection: scenario"
            f" {open_loops[0]!r} is an open loop, with no users"
        )
    return level_plan(scenario.level_scenarios, load.connection_label(0))
