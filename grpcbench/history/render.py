"""``grpcbench history`` as tables: per scenario and level, a run per row and a
server kind per column, change points marked in their cell and said below."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from grpcbench.base.units import format_latency_us
from grpcbench.history.history import History
from grpcbench.history.series import SEPARATOR
from grpcbench.report.figures import FIGURES

# A change the control project shares (the host's) is neither good nor bad news.
COLOURS = {"regression": "red", "improvement": "green", "host": "yellow"}


def value_format(figure: str) -> Callable[[float], str]:
    if figure in FIGURES and figure != "rps":
        return format_latency_us
    if figure == "server_cpu_per_call":
        return lambda value: f"{value:,.1f} µs"
    return lambda value: f"{value:,.0f}/s"


def _run_label(history: History, run_id: int) -> str:
    number = next(n for n, run in enumerate(history.runs, 1) if run.id == run_id)
    run = history.runs[number - 1]
    commit = f" ({run.commit[:9]})" if run.commit else ""
    return f"run {number}{commit}"


def print_history(console: Console, history: History, last: int) -> None:
    """The newest ``last`` runs of each group; the change points of all runs below."""
    show = value_format(history.figure)
    marks = {(c.series, c.run_id): c for c in history.change_points}
    shown_runs = history.runs[-last:]
    first_number = len(history.runs) - len(shown_runs) + 1
    for group, series_list in history.groups().items():
        table = Table(title=f"{escape(group)}: {history.label}", title_justify="left")
        for header in ("#", "started", "commit"):
            table.add_column(header, no_wrap=True)
        for series in series_list:
            table.add_column(escape(series.rpartition(SEPARATOR)[2]), justify="right")
        for number, run in enumerate(shown_runs, first_number):
            cells = []
            for series in series_list:
                point = history.values[series].get(run.id)
                cell = show(point.value) if point else "-"
                change = marks.get((series, run.id))
                if change is not None:
                    colour = COLOURS[change.kind]
                    cell = f"[{colour}]{'▲' if change.after > change.before else '▼'} {cell}[/]"
                cells.append(cell)
            commit = (run.commit or "")[:9] + ("+" if run.dirty else "")
            table.add_row(str(number), run.started_at[:19], commit, *cells)
        console.print(table)
    if not history.runs:
        console.print("no complete runs in this project yet")
    for change in history.change_points:
        whose = "".join(f"; {escape(said)}" for said in change.qualifiers())
        console.print(
            f"[{COLOURS[change.kind]}]{change.kind}[/] at"
            f" {_run_label(history, change.run_id)}: {escape(change.series)}:"
            f" {show(change.before)} -> {show(change.after)} ({change.change:+.1%},"
            f" p = {change.p_value:.2g}){whose}",
            highlight=False,
        )
    if not history.change_points and history.runs:
        runs = len(history.runs)
        console.print(f"no change points in {history.label} over {runs} run{'s' * (runs > 1)}")
