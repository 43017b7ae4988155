"""The dashboard's pages as HTML text (``history.web`` serves them).

Plain server-rendered pages; the one script is uPlot (vendored in ``static/``, MIT),
drawing each level's history with its change points as vertical lines: nothing is
fetched from another host, so the dashboard works offline. Every text that came
from a results file or a URL is escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from urllib.parse import quote, urlencode

from grpcbench.history.history import History
from grpcbench.history.render import value_format
from grpcbench.history.series import HISTORY_FIGURES, SEPARATOR
from grpcbench.history.store import StoredRun

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em}
th{background:#f3f3f3}a{color:#0645ad}.ok{color:#1a7f37}.fail{color:#cf222e;font-weight:bold}
.figures a{margin-right:.8em}.figures a.on{font-weight:bold;text-decoration:none;color:#222}
.chart{margin:1em 0}.regression{color:#cf222e}.improvement{color:#1a7f37}.host{color:#9a6700}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def page(title: str, body: str, scripts: bool = False) -> str:
    head = (
        '<link rel="stylesheet" href="/static/uPlot.min.css">'
        '<script src="/static/uPlot.iife.min.js"></script>'
        if scripts
        else ""
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}'
        f"</title><style>{STYLE}</style>{head}</head><body>"
        f'<p><a href="/">grpcbench history</a></p><h1>{_e(title)}</h1>{body}</body></html>'
    )


def projects_page(rows: Sequence[tuple[str, int, str | None, list[str], str | None]]) -> str:
    """(name, runs, newest start, the figures the newest run regressed, its control)
    per project."""
    if not rows:
        return page("Projects", "<p>No runs stored yet: <code>grpcbench run --store URL"
                                " --project NAME</code>, or POST a results file.</p>")  # fmt: skip
    body = "".join(
        f'<tr><td><a href="/projects/{quote(name, safe="")}">{_e(name)}</a></td><td>{runs}</td>'
        f"<td>{_e(newest or '-')}</td><td>"
        + (f'<span class="fail">REGRESSION: {_e(", ".join(failed))}</span>' if failed
           else '<span class="ok">OK</span>')
        + f"</td><td>{_e(control or '-')}</td></tr>"
        for name, runs, newest, failed, control in rows
    )  # fmt: skip
    return page(
        "Projects",
        "<table><tr><th>project</th><th>runs</th><th>newest run</th>"
        f"<th>newest run's status</th><th>against the control</th></tr>{body}</table>",
    )


def _run_cell(run: StoredRun) -> str:
    commit = (run.commit or "")[:9] + ("+" if run.dirty else "")
    return f'<a href="/runs/{run.id}">run {run.id}</a> {_e(commit)}'


UNITS = {"rps": "requests/s", "capacity": "requests/s", "server_cpu_per_call": "CPU µs per call"}


def _chart(history: History, group: str, series: list[str], number: int) -> str:
    """One uPlot chart: x is the run's place in the project, one line per column."""
    place = {run.id: n for n, run in enumerate(history.runs, 1)}
    xs = list(range(1, len(history.runs) + 1))
    lines = [
        [history.values[s][run.id].value if run.id in history.values[s] else None
         for run in history.runs]
        for s in series
    ]  # fmt: skip
    changes = [
        {"x": place[c.run_id], "kind": c.kind} for c in history.change_points if c.series in series
    ]
    labels = [s.rpartition(SEPARATOR)[2] for s in series]
    data = json.dumps({
        "title": f"{group}: {history.label}", "labels": labels, "data": [xs, *lines],
        "changes": changes, "unit": UNITS.get(history.figure, "µs"),
    }).replace("<", "\\u003c")  # fmt: skip
    chart = f"chart{number}"
    return f'<div class="chart" id="{chart}"></div><script>draw("{chart}", {data});</script>'


DRAW_SCRIPT = """<script>
const COLOURS = ["#1f77b4","#ff7f0e","#2ca02c","#9467bd","#8c564b","#e377c2","#7f7f7f","#17becf"];
const MARKS = {regression: "#cf222e", improvement: "#1a7f37", host: "#9a6700"};
function draw(id, chart) {
  const marks = u => {
    const ctx = u.ctx; ctx.save(); ctx.lineWidth = 2;
    for (const c of chart.changes) {
      const x = u.valToPos(c.x - 0.5, "x", true);
      ctx.strokeStyle = MARKS[c.kind]; ctx.beginPath();
      ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
    }
    ctx.restore();
  };
  new uPlot({title: chart.title, width: 900, height: 300, scales: {x: {time: false}},
    axes: [{label: "run"}, {label: chart.unit, size: 70}],
    series: [{label: "run"}, ...chart.labels.map((label, i) =>
      ({label, stroke: COLOURS[i % COLOURS.length], width: 2, points: {show: true}}))],
    hooks: {draw: [marks]}}, chart.data, document.getElementById(id));
}
</script>"""


def project_page(history: History, series_filter: str | None, control: str | None = None) -> str:
    keep = {key: value for key, value in (("series", series_filter), ("control", control))
            if value}  # fmt: skip
    base = f"/projects/{quote(history.project, safe='')}"
    figures = "".join(
        f'<a class="{"on" if key == history.figure else ""}"'
        f' href="{base}?{urlencode({"figure": key, **keep})}">{_e(label)}</a>'
        for key, (label, _) in HISTORY_FIGURES.items()
    )
    show = value_format(history.figure)
    place = {run.id: n for n, run in enumerate(history.runs, 1)}
    changes = "".join(
        f'<li class="{c.kind}">{c.kind} at run {place[c.run_id]} '
        f'(<a href="/runs/{c.run_id}">run {c.run_id}</a>): {_e(c.series)}: {_e(show(c.before))}'
        f" &rarr; {_e(show(c.after))} ({c.change:+.1%}, p = {c.p_value:.2g})"
        + "".join(f"; {_e(said)}" for said in c.qualifiers())
        + "</li>"
        for c in history.change_points
    ) or f"<li>No change points in {_e(history.label)}.</li>"  # fmt: skip
    charts = "".join(
        _chart(history, group, series, number)
        for number, (group, series) in enumerate(history.groups().items())
    )
    options = "".join(
        f'<option value="{run.id}">run {run.id} {_e((run.commit or "")[:9])}'
        f" {_e(run.started_at[:19])}</option>"
        for run in reversed(history.runs)
    )
    runs = "".join(
        f"<tr><td>{place[run.id]}</td><td>{_run_cell(run)}</td><td>{_e(run.started_at)}</td>"
        f"<td>{_e(run.branch or '-')}</td><td>{_e(run.kind)}</td>"
        f"<td>{_e(run.host or '-')}</td></tr>"
        for run in reversed(history.runs)
    )  # fmt: skip
    body = (
        f'<p class="figures">{figures}</p><h2>Change points</h2>'
        + (
            f"<p>Against the control project {_e(control)}: the changes it shares are the"
            " host's.</p>"
            if control
            else ""
        )
        + f'<ul id="changes">{changes}</ul>'
        f"{DRAW_SCRIPT}<h2>History</h2>{charts or '<p>No values of this figure.</p>'}"
        '<h2>Compare two runs</h2><form action="/compare">'
        f'<select name="a">{options}</select> &rarr; <select name="b">{options}</select>'
        ' <button type="submit">compare</button></form>'
        "<h2>Runs</h2><table><tr><th>#</th><th>run</th><th>started</th><th>branch</th>"
        f"<th>kind</th><th>host</th></tr>{runs}</table>"
    )
    return page(f"{history.project}: {history.label}", body, scripts=True)


def compare_page(a: int, b: int, rows: Sequence[str], markdown_rows: Sequence[list[str]]) -> str:
    """``compare``'s table for two stored runs (``rows``: its header)."""
    head = "".join(f"<th>{_e(cell)}</th>" for cell in rows)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>" for row in markdown_rows
    )
    return page(f"Run {b} against run {a}", f"<table><tr>{head}</tr>{body}</table>")
