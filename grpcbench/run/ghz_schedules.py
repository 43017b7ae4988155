"""ghz's schedules on a ghz line: ``--load-schedule`` (the rate over time) and
``--concurrency-schedule`` (the workers over time) with their ``--load-*`` and
``--concurrency-*`` flags, as the texts of ``--rate-schedule ghz:...`` and
``--worker-schedule ghz:...``, checked as ghz checks them."""

from __future__ import annotations

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_duration
from grpcbench.model.schedule import parse_rate_schedule
from grpcbench.run.ghz_flags import GhzFlags

GHZ_TOTAL = 200  # ghz's -n when none is given (ghz --help, v0.120.0)


def _ghz_schedule(flags: GhzFlags, prefix: str, step_default: str, unit: str) -> str | None:
    """ghz's --PREFIX-schedule step|line and its --PREFIX-* flags as ``ghz:`` schedule
    text (None for const, ghz's default), checked as ghz checks them."""
    given = {name: getattr(flags, f"{prefix}_{name}") for name in
             ("start", "step", "end", "step_duration", "max_duration")}  # fmt: skip
    kind_given = getattr(flags, f"{prefix}_schedule")
    kind = (kind_given or "const").lower()
    if kind == "const":
        others = [f"--{prefix}-{name.replace('_', '-')}" for name, v in given.items() if v]
        if others:
            raise UsageError(f"{', '.join(others)} go with --{prefix}-schedule step or line")
        return None
    if kind not in ("step", "line"):
        raise UsageError(f'bad --{prefix}-schedule {kind_given!r}: "const", "step" or "line"')
    start, step, end = given["start"] or "0", given["step"] or step_default, given["end"] or "0"
    for name, value in (("start", start), ("step", step), ("end", end)):
        if not value.removeprefix("-" if name == "step" else "").isdecimal():
            raise UsageError(f"bad --{prefix}-{name} {value!r}: {unit}")
    if int(start) == int(end):
        raise UsageError(f"--{prefix}-start cannot equal --{prefix}-end (ghz's check)")
    if int(step) == 0:
        raise UsageError(f"invalid --{prefix}-step: give its change per step (not 0)")
    every = "1s" if kind == "line" else given["step_duration"]
    if not every:
        raise UsageError(f"--{prefix}-schedule step needs --{prefix}-step-duration (ghz's check)")
    text = f"ghz:start={int(start)},step={int(step)},every={every}"
    text += f",end={int(end)}" if int(end) else ""
    return text + (f",max={given['max_duration']}" if given["max_duration"] else "")


def load_schedule(flags: GhzFlags) -> str | None:
    """ghz's --load-schedule as ``--rate-schedule ghz:`` text (its step's default: 0)."""
    text = _ghz_schedule(flags, "load", "0", "an integer, calls/s")
    if text is not None and int(flags.load_start or "0") <= 0:
        raise UsageError("--load-start must be above 0 calls/s (ghz's Start.Freq cannot be 0)")
    return text


def concurrency_schedule(flags: GhzFlags) -> str | None:
    """ghz's --concurrency-schedule as ``--worker-schedule ghz:`` text (its command
    line's defaults: start 0, step 1)."""
    return _ghz_schedule(flags, "concurrency", "1", "a whole number of workers")


def with_horizon(schedule: str, settings: dict[str, object], skipped: int) -> str:
    """An open ramp (no --load-end, no --load-max-duration: its rate never stops
    changing) with the time its level is expected to end (-z, or -n's calls at its
    pace), which bounds its peak rate; a ramp that holds is returned as it is."""
    pacer = parse_rate_schedule(schedule)
    if pacer.duration_s:  # it holds from then on: its peak is known
        return schedule
    if settings.get("duration"):
        seconds = parse_duration(str(settings["duration"]), "-z")
    else:
        calls = int(str(settings.get("requests") or GHZ_TOTAL)) + skipped  # -n's total
        seconds = pacer.time_of(calls)
    return f"{schedule},horizon={seconds:.3f}s"
