"""Markdown exporter: the seed's published table layout, one table per level."""

from __future__ import annotations

from grpcbench.base.text import printable
from grpcbench.model.results import RunRecord
from grpcbench.model.warmup import Warmup, describe_warmups
from grpcbench.report.capacity import record_tables
from grpcbench.report.summary import summary_lines
from grpcbench.report.table import ComparisonTable


def table_to_markdown(table: ComparisonTable) -> str:
    header = "| " + " | ".join(["", *table.columns]) + " |"
    rule = "|" + "|".join(["---"] * (len(table.columns) + 1)) + "|"
    body = ["| " + " | ".join([name, *cells]) + " |" for name, cells in table.rows]
    notes = [f"\n> {note}" for note in table.notes]
    return "\n".join([f"#### {table.title}", "", header, rule, *body, *notes]) + "\n"


def run_to_markdown(record: RunRecord) -> str:
    meta, load = record.metadata, record.options.settings
    named = record.options.describe_run()
    warmups = describe_warmups(Warmup.asked(load), (level.warmup for level in record.levels))
    lines = [
        f"# grpcbench results{': ' + named if named else ''} ({record.status})",
        "",
        f"- started {record.started_at}, python {meta.get('python')}, "
        f"{meta.get('cpu_count')} CPUs ({meta.get('cpu_model')})",
        f"- packages: {', '.join(f'{k} {v}' for k, v in meta.get('packages', {}).items() if v)}",
        f"- {load.describe()} per level after {warmups}, deadline {load.timeout_s:g} s;"
        " built-in client stack"
        f" {load.client_stack};"
        f" {record.options.placement.describe()}",
        f"- scenario {record.options.scenario}, parameters: {record.options.describe_params()}",
        "",
        "",
    ]
    lines = [printable(line) for line in lines]  # names and parameters from the results
    tables = [table_to_markdown(t) for t in record_tables(record)]
    summary = summary_lines(record.levels) if record.capacity is None else []
    tail = ["", "#### Summary", "", *(f"- {line}" for line in summary)] if summary else []
    return "\n".join(lines) + "\n".join(tables) + "\n".join(tail) + ("\n" if tail else "")


def render_markdown(record: RunRecord) -> bytes:
    return run_to_markdown(record).encode()
