"""Console exporter: rich tables, one per level."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from grpcbench.report.table import ComparisonTable, build_tables
from grpcbench.results import LevelResult


def to_rich(table: ComparisonTable) -> Table:
    # Labels such as "grpclib [builtin]" must not be read as rich markup.
    # The title is printed apart (print_tables): a table title wraps at the table's width.
    rich_table = Table(caption_justify="left")
    rich_table.add_column("", style="bold")
    for column in table.columns:
        rich_table.add_column(escape(column), justify="right")
    for name, cells in table.rows:
        rich_table.add_row(escape(name), *map(escape, cells))
    if table.notes:
        rich_table.caption = escape("\n".join(table.notes))
    return rich_table


def print_tables(console: Console, levels: list[LevelResult]) -> None:
    for table in build_tables(levels):
        console.print(table.title, style="italic", soft_wrap=True, markup=False, highlight=False)
        console.print(to_rich(table))
        console.print()
