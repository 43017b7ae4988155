"""Console exporter: rich tables, one per level, split to fit the terminal's width.

A table wider than the terminal would truncate its headers (two
"grpcio:workers…" columns look the same), so its columns are split over as
many tables as needed, each with the row names, and every header stays whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table

from grpcbench.model.results import LevelError, LevelResult
from grpcbench.model.thresholds import Threshold
from grpcbench.report.profiles import profile_tables
from grpcbench.report.summary import summary_lines
from grpcbench.report.table import ComparisonTable, build_tables

# Borders and padding: 3 characters per column plus 1 at the table's edge.
COLUMN_OVERHEAD = 3


def to_rich(table: ComparisonTable) -> Table:
    # Labels such as "grpclib [builtin]" must not be read as rich markup.
    # The title is printed apart (print_tables): a table title wraps at the table's width.
    rich_table = Table()
    rich_table.add_column("", style="bold", no_wrap=True)
    for column in table.columns:
        rich_table.add_column(escape(column), justify="right", no_wrap=True)
    for name, cells in table.rows:
        rich_table.add_row(escape(name), *map(escape, cells))
    return rich_table


def _width(texts: list[str]) -> int:
    return max((len(text) for text in texts), default=0) + COLUMN_OVERHEAD


def split_to_fit(table: ComparisonTable, width: int) -> list[ComparisonTable]:
    """``table`` as one or more tables of whole columns, each at most ``width`` wide."""
    names = _width([name for name, _ in table.rows])
    widths = [
        _width([label, *(cells[index] for _, cells in table.rows)])
        for index, label in enumerate(table.columns)
    ]
    chunks: list[list[int]] = [[]]
    used = names + 1
    for index, column_width in enumerate(widths):
        if chunks[-1] and used + column_width > width:
            chunks.append([])
            used = names + 1
        chunks[-1].append(index)
        used += column_width
    if len(chunks) == 1:
        return [table]
    parts = []
    for number, indexes in enumerate(chunks, start=1):
        parts.append(
            replace(
                table,
                level=f"{table.level} ({number}/{len(chunks)})",
                columns=tuple(table.columns[i] for i in indexes),
                rows=tuple((name, tuple(cells[i] for i in indexes)) for name, cells in table.rows),
                notes=table.notes if number == len(chunks) else (),
            )
        )
    return parts


def print_tables(
    console: Console,
    levels: list[LevelResult],
    unavailable: Sequence[LevelError] = (),
    thresholds: Sequence[Threshold] = (),
) -> None:
    tables = build_tables(levels, unavailable, thresholds) + profile_tables(levels)
    print_comparison_tables(console, tables)


def print_comparison_tables(console: Console, tables: Sequence[ComparisonTable]) -> None:
    """Tables split to the terminal's width, each with its title and notes."""
    for whole in tables:
        for table in split_to_fit(whole, console.width):
            console.print(
                table.title, style="italic", soft_wrap=True, markup=False, highlight=False
            )
            console.print(to_rich(table))
            # Notes below the table at the terminal's width, not squeezed into a caption.
            for note in table.notes:
                console.print(escape(note), highlight=False)
            console.print()


def print_summary(console: Console, levels: list[LevelResult]) -> None:
    """The run in a few lines, after the tables."""
    lines = summary_lines(levels)
    if lines:
        console.print("Summary", style="bold")
        for line in lines:
            console.print(Padding(escape(line), (0, 0, 0, 2)), highlight=False)
