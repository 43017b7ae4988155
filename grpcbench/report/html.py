"""HTML exporter: one self-contained file - metadata, tables and charts, no network.

Charts are inline SVG (sharp on screen and on paper); a few lines of inline
JavaScript check on load that every chart has a size and record the result in
the page title ("charts: N rendered"), which the browser test reads. With
``--profile``, flame graphs of every profiled cell follow the tables
(``report.flamegraph_html``).
"""

from __future__ import annotations

import html
import re

from grpcbench.model.results import RunRecord
from grpcbench.report.capacity import record_tables
from grpcbench.report.chart_kit import Chart
from grpcbench.report.charts import render_charts
from grpcbench.report.flamegraph_html import FLAME_SCRIPT, FLAME_STYLE, flame_section
from grpcbench.report.summary import summary_lines
from grpcbench.report.table import ComparisonTable

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 1100px; color: #222; }
#headline { background: #f4f6f8; padding: .5rem 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; } h3 { font-size: 1rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .85rem; }
th, td { border: 1px solid #ccc; padding: .2rem .5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.meta td { text-align: left; } .notes { font-size: .8rem; color: #a40; }
.chart svg { max-width: 100%; height: auto; } .chart { break-inside: avoid; }
@media print { body { max-width: none; } h2 { break-before: page; } }
"""

CHECK_SCRIPT = """
window.addEventListener("load", () => {
  const charts = [...document.querySelectorAll(".chart svg")];
  const drawn = charts.filter(svg => {
    const box = svg.getBBox();
    return box.width > 0 && box.height > 0;
  });
  document.title = `charts: ${drawn.length} rendered of ${charts.length}`;
});
"""


def _table_html(table: ComparisonTable) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ("", *table.columns))
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in (name, *cells)) + "</tr>"
        for name, cells in table.rows
    )
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in table.notes)
    return f"<h3>{html.escape(table.title)}</h3><table><tr>{head}</tr>{rows}</table>" + (
        f'<ul class="notes">{notes}</ul>' if notes else ""
    )


def _svg(chart: Chart) -> str:
    """matplotlib's SVG without its XML prolog, ready to inline."""
    return re.sub(r"^.*?(<svg)", r"\1", chart.svg, count=1, flags=re.S)


def run_to_html(record: RunRecord, charts: list[Chart]) -> str:
    meta = record.metadata
    options = record.options
    facts = {
        "status": record.status + (f" ({record.error})" if record.error else ""),
        "started": record.started_at,
        "finished": record.finished_at or "-",
        "scenario": options.scenario or "-",
        "python": meta.get("python", "-"),
        "packages": ", ".join(f"{k} {v}" for k, v in (meta.get("packages") or {}).items() if v),
        "machine": (
            f"{meta.get('cpu_count')} CPUs ({meta.get('cpu_model')}), {meta.get('platform')}"
        ),
        "placement": options.placement.describe(),
        "command": " ".join(meta.get("argv") or []),
    }
    facts_html = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(str(v))}</td></tr>"
        for k, v in facts.items()
    )
    tables = "".join(_table_html(t) for t in record_tables(record))
    charts_html = "".join(
        f'<div class="chart" title="{html.escape(c.title)}">{_svg(c)}</div>' for c in charts
    )
    failures = "".join(f"<li>{html.escape(e.describe())}</li>" for e in record.level_errors)
    headline = "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(record.levels))
    hollow = (
        "<p>Hollow markers on the charts are figures that are not server-bound (the Verdict"
        " row says what limited them).</p>"
        if any(level.verdict != "server-bound" for level in record.levels)
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>grpcbench report</title>
<style>{STYLE}{FLAME_STYLE}</style><script>{CHECK_SCRIPT}{FLAME_SCRIPT}</script></head>
<body><h1>grpcbench report</h1>
<section id="headline"><h2>Summary</h2><ul>{headline}</ul>{hollow}</section>
<table class="meta">{facts_html}</table>
{f'<ul class="notes">{failures}</ul>' if failures else ""}
<h2>Charts</h2>{charts_html}
<h2>Tables</h2>{tables}
{flame_section(record.levels)}
</body></html>
"""


def render_html(record: RunRecord, charts: list[Chart] | None = None) -> bytes:
    """The page, with the record's charts unless ``charts`` are given."""
    return run_to_html(record, render_charts(record) if charts is None else charts).encode()
