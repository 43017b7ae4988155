"""The store's commands as the command line declares them (``app`` registers them):
``store`` and ``history``. The store's URL and the project also come from
``GRPCBENCH_STORE`` and ``GRPCBENCH_PROJECT``, so CI says them once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grpcbench.cli.calling import call_command

STORE = typer.Option(
    "--store",
    help="The results store: sqlite:///PATH or postgresql://USER@HOST/DB (a password only"
    " in GRPCBENCH_STORE or PGPASSWORD). Default: GRPCBENCH_STORE.",
    show_default=False,
)
PROJECT = typer.Option(
    "--project", help="The project the runs belong to. Default: GRPCBENCH_PROJECT.",
    show_default=False,
)  # fmt: skip


def store(
    files: Annotated[list[Path], typer.Argument(help="Results files written by `run --output`.")],
    store: Annotated[str | None, STORE] = None,
    project: Annotated[str | None, PROJECT] = None,
) -> None:
    """Keep results files (CI artifacts, say) in a results store; each once."""
    from grpcbench.cli import store_commands

    call_command(store_commands.store_files, files, store, project)


def history(
    store: Annotated[str | None, STORE] = None,
    project: Annotated[str | None, PROJECT] = None,
    figure: Annotated[
        str,
        typer.Option(help="rps, avg, p50, p90, p99, p99.9, server_cpu_per_call or capacity."),
    ] = "p50",
    series: Annotated[
        str | None,
        typer.Option(help="Only the series whose name holds this text (a server kind, a level)."),
    ] = None,
    last: Annotated[int, typer.Option(help="Show the newest N runs (all runs are tested).")] = 30,
    max_pvalue: Annotated[
        float, typer.Option(help="Significance of a change point (Otava's t-test).")
    ] = 0.001,
    min_effect: Annotated[
        float,
        typer.Option(help="A change must be this many times the runs' scatter (their deviation)."),
    ] = 3.0,
    control: Annotated[
        str | None,
        typer.Option(
            help="A control project run beside this one on unchanged code (a canary): the"
            " changes it shares are the host's, never regressions.",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help=(
                "Exit with 99 when the newest run starts a regression of the server"
                " (unconfirmed: it rests on that run) or confirms one the run before started."
            ),
        ),
    ] = False,
) -> None:
    """A figure over a project's runs, per level and server kind, with its change points."""
    from grpcbench.cli import store_commands

    args = store_commands.HistoryArgs(
        store,
        project,
        figure,
        series,
        last,
        max_pvalue,
        min_effect,
        output_format,
        fail_on_regression,
        control,
    )
    call_command(store_commands.history, args)


def web(
    store: Annotated[str | None, STORE] = None,
    host: Annotated[
        str, typer.Option(help="Listen here (a public address serves every reader there).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0 = any free port).")] = 8765,
    control: Annotated[
        list[str] | None,
        typer.Option(
            help=(
                "PROJECT=CONTROL: read PROJECT's status and history against the control"
                " project CONTROL, as `history --control` does (repeatable)."
            ),
        ),
    ] = None,
) -> None:
    """Serve the store's dashboard: projects, histories with change points, runs, an
    ingest API for CI (pip install 'grpcbench[web]')."""
    from grpcbench.cli import store_commands

    call_command(store_commands.web, store, host, port, control or [])
