"""ghz's own flags, declared as `run` options of their own (``RunArgs.ghz_flags``):
what a ghz command line says that `run` says otherwise. ``run.ghz_compat`` maps
them onto `run`'s options."""

from __future__ import annotations

from dataclasses import dataclass

from grpcbench.base import panels
from grpcbench.base.declarations import option


@dataclass(frozen=True)
class GhzFlags:
    """ghz's own flags as typed (None: not given); ``run.ghz_compat`` maps them onto
    `run`'s options."""

    rps: str | None = option(None, "--rps", "-r", help="ghz's --rps: --rate.", panel=panels.GHZ)
    load_schedule: str | None = option(
        None,
        help="ghz's: const (the default), step or line: --rate-schedule ghz:...",
        panel=panels.GHZ,
    )
    load_start: str | None = option(None, help="ghz's: the ramp's first rate, calls/s.",
                                    panel=panels.GHZ)  # fmt: skip
    load_step: str | None = option(
        None, help="ghz's: the rate's change per step (line: per second).", panel=panels.GHZ
    )
    load_end: str | None = option(None, help="ghz's: the rate the ramp holds at.",
                                  panel=panels.GHZ)  # fmt: skip
    load_step_duration: str | None = option(None, help="ghz's: how long each step lasts.",
                                            panel=panels.GHZ)  # fmt: skip
    load_max_duration: str | None = option(
        None, help="ghz's: when the ramp stops changing and holds its rate.", panel=panels.GHZ
    )
    concurrency_schedule: str | None = option(
        None,
        help="ghz's: const (the default), step or line: --worker-schedule ghz:...",
        panel=panels.GHZ,
    )
    concurrency_start: str | None = option(None, help="ghz's: the first number of workers.",
                                           panel=panels.GHZ)  # fmt: skip
    concurrency_step: str | None = option(
        None, help="ghz's: the workers' change per step (line: per second).", panel=panels.GHZ
    )
    concurrency_end: str | None = option(None, help="ghz's: the number of workers to hold at.",
                                         panel=panels.GHZ)  # fmt: skip
    concurrency_step_duration: str | None = option(
        None, help="ghz's: how long each step of workers lasts.", panel=panels.GHZ
    )
    concurrency_max_duration: str | None = option(
        None, help="ghz's: when the number of workers stops changing.", panel=panels.GHZ
    )
    lb_strategy: str | None = option(
        None,
        help="ghz's: grpc's pick_first or round_robin; the same here for one address (what"
        " HOST:PORT is to ghz); over several a dns:/// name resolves to, refused.",
        panel=panels.GHZ,
    )
    skip_first: int | None = option(
        None, "--skipFirst", help=("ghz's: --warmup N."), panel=panels.GHZ
    )
    max_duration: str | None = option(
        None, "--max-duration", "-x", help=("ghz's: --max-level."), panel=panels.GHZ
    )
    stream_call_count: int | None = option(None, help="ghz's: --stream-messages.", panel=panels.GHZ)
    cpus: int | None = option(None, help="ghz's: --client-processes N.", panel=panels.GHZ)
    config: str | None = option(
        None,
        help=("ghz's JSON or TOML file of options; the command line wins."),
        panel=panels.GHZ,
        reads=True,
    )
    output_format: str | None = option(
        None,
        "--format",
        "-O",
        help="ghz's output formats, as ghz prints them: summary, csv, json, pretty,"
        " influx-summary, influx-details or prometheus (to -o, or without it to standard"
        " output, the tables then going to standard error); html or grpcbench (its JSON).",
        panel=panels.GHZ,
    )
    run_name: str | None = option(
        None, "--name", help=("A name for the run, recorded and shown."), panel=panels.GHZ
    )
    tags_json: str | None = option(
        None,
        "--tags",
        help=('Tags as a JSON object (\'{"env": "ci"}\'), recorded and shown.'),
        panel=panels.GHZ,
    )
    asynchronous: bool = option(
        False, "--async", help=("ghz's: accepted (see docs)."), panel=panels.GHZ
    )
    count_errors: bool = option(
        False,
        help=("ghz's: always on here (failed calls count in every figure)."),
        panel=panels.GHZ,
    )
    disable_template_functions: bool = option(
        False,
        help="ghz's: -d and -m keep their data fields; a function is refused.",
        panel=panels.GHZ,
    )
    debug: str | None = option(
        None,
        help="ghz's: a log of the run (servers, levels, progress, statuses, warnings) to"
        " this file, line by line.",
        panel=panels.GHZ,
    )
    disable_template_data: bool = option(
        False, help="ghz's: -d and -m are sent as they are, {{ }} included.", panel=panels.GHZ
    )
