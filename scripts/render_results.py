"""Regenerate the benchmark tables of README.md and docs/ from saved results.

    python scripts/render_results.py          # rewrite every results block
    python scripts/render_results.py --check  # exit 1 if a block differs (a test runs this)

Figures in the docs are never typed by hand.

Each table lives between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->``
and is rendered from ``docs/results/NAME.json``: ``nox -s loadgen -- --save`` and
``nox -s streaming -- --save`` write medians and ratios of interleaved runs, and
``grpcbench run --output`` a results file (its tables, through the Markdown exporter).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
README = ROOT / "README.md"


def documents() -> list[Path]:
    """Every page that may hold results blocks: the README and the docs site."""
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


LOADGEN_LABELS = {
    "h2load": "h2load (nghttp2), the request as a raw HTTP/2 body",
    "builtin": "**grpcbench built-in, wire stack (default)**",
    "builtin:2": "built-in, wire, 2 processes (sharing CPU 1)",
    "builtin@grpcio": "built-in, `--client-stack grpcio` (grpc.aio)",
    "bare": "bare grpc.aio loop (`benchmarks/bare_loop.py`)",
    "ghz": "ghz, `--disable-template-functions --cpus 1`",
}


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(run[key]) for run in runs)


def _machine(record: dict[str, Any]) -> str:
    meta = record["metadata"]
    packages = meta.get("packages", {})
    return (
        f"{meta.get('cpu_count')} CPUs ({meta.get('cpu_model')}), Python {meta.get('python')},"
        f" grpcio {packages.get('grpcio')}, uvloop {packages.get('uvloop')}"
    )


def render_loadgen(record: dict[str, Any]) -> str:
    by_client: dict[str, list[dict[str, Any]]] = {}
    for run in record["runs"]:
        by_client.setdefault(run["client"], []).append(run)
    lines = [
        f"Server: {record['server']} on CPU 0; each client alone on CPU 1; concurrency"
        f" {record['concurrency']}, {record['requests']:,} calls per run, {record['rounds']}"
        f" interleaved rounds, medians. {_machine(record)}.",
        "",
        "| client | req/s | client CPU µs per call | p50 | verdict (last round) |",
        "|---|---|---|---|---|",
    ]
    order = [c for c in LOADGEN_LABELS if c in by_client] + [
        c for c in by_client if c not in LOADGEN_LABELS
    ]
    for client in order:
        runs = by_client[client]
        p50 = [r["p50_us"] for r in runs if r.get("p50_us")]
        median_p50 = f"{statistics.median(p50) / 1000:.2f} ms" if p50 else "-"
        lines.append(
            f"| {LOADGEN_LABELS.get(client, client)} | {_median(runs, 'rps'):,.0f}"
            f" | {_median(runs, 'cpu_us_per_call'):.1f} | {median_p50} | {runs[-1]['verdict']} |"
        )
    lines.append("")
    ratios = []
    for a, b, goal in (
        ("builtin", "h2load", "goal: CPU ≤ 2.5x, rate ≥ 0.7x"),
        ("builtin", "ghz", "goal: CPU ≤ 0.4x"),
        ("builtin", "builtin@grpcio", ""),
        ("builtin@grpcio", "bare", ""),
    ):
        if a in by_client and b in by_client:
            rate = _median(by_client[a], "rps") / _median(by_client[b], "rps")
            cost = _median(by_client[a], "cpu_us_per_call") / _median(
                by_client[b], "cpu_us_per_call"
            )
            ratios.append(
                f"- {a} / {b}: rate **{rate:.2f}x**, CPU per call **{cost:.2f}x**"
                + (f" ({goal})" if goal else "")
            )
    open_loop = record.get("open_loop") or []
    if open_loop:
        groups: dict[tuple[float, str], list[dict[str, Any]]] = {}
        for run in open_loop:
            groups.setdefault((run["rate"], run["client"]), []).append(run)
        ratios += [
            "",
            "Open loop (`--rate`, 3 s per run, medians): does the generator keep its timetable?",
            "",
            "| offered rate | client | achieved req/s | send lag p99 | latency p99 |",
            "|---|---|---|---|---|",
        ]
        for (rate, client), runs in groups.items():
            lag = statistics.median(r["lag_p99_us"] or 0 for r in runs) / 1000
            p99 = _median(runs, "p99_us") / 1000
            ratios.append(
                f"| {rate:,.0f}/s | {LOADGEN_LABELS.get(client, client)} |"
                f" {_median(runs, 'rps'):,.0f} | {lag:.2f} ms | {p99:.2f} ms |"
            )
    return "\n".join(lines + ratios)


def render_streaming(record: dict[str, Any]) -> str:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        groups.setdefault((run["method"], run["client"]), []).append(run)
    lines = [
        f"grpc-go's route_guide on CPU 0, the client on CPU 1; concurrency"
        f" {record['concurrency']}, {record['requests']:,} calls per run, {record['rounds']}"
        f" interleaved rounds (a fresh server each run), medians. {_machine(record)}.",
        "",
        "| method | client | req/s | client CPU µs per call | µs per reply message |",
        "|---|---|---|---|---|",
    ]
    for (method, client), runs in groups.items():
        per_message = [r["cpu_per_message"] for r in runs if r.get("cpu_per_message")]
        lines.append(
            f"| {method} | {client} | {_median(runs, 'rps'):,.0f}"
            f" | {_median(runs, 'cpu_per_call'):.1f}"
            f" | {(f'{statistics.median(per_message):.2f}') if per_message else '-'} |"
        )
    lines.append("")
    for method in dict.fromkeys(m for m, _ in groups):
        if (method, "builtin") in groups and (method, "ghz") in groups:
            ratio = _median(groups[(method, "builtin")], "rps") / _median(
                groups[(method, "ghz")], "rps"
            )
            lines.append(f"- {method}: built-in / ghz req/s **{ratio:.2f}x**")
    return "\n".join(lines)


def render_run(record: dict[str, Any], path: Path) -> str:
    """A saved ``grpcbench run --output`` file: its tables at the lowest and highest
    concurrency, through grpcbench's own Markdown exporter."""
    from grpcbench.report.markdown import table_to_markdown
    from grpcbench.report.table import build_tables
    from grpcbench.results import load_run

    run = load_run(path)
    meta, load = run.metadata, run.options.load
    packages = meta.get("packages", {})
    tables = build_tables(run.levels, run.unavailable)
    shown = [tables[0], tables[-1]] if len(tables) > 1 else tables
    intro = (
        f"`grpcbench run` on its defaults ({run.started_at[:10]}): {meta.get('cpu_count')} CPUs"
        f" ({meta.get('cpu_model')}), Python {meta.get('python')}, grpcio"
        f" {packages.get('grpcio')}, grpclib {packages.get('grpclib')}, uvloop"
        f" {packages.get('uvloop')}; {run.options.placement.describe()}; {load.describe()} per"
        f" level after {load.warmup_requests} warm-up calls; client stack {load.client_stack}."
        f" Shown: the first and last of its {len(tables)} levels."
    )
    return intro + "\n\n" + "\n".join(table_to_markdown(t) for t in shown).rstrip()


def render_crosscheck(record: dict[str, Any]) -> str:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        groups.setdefault((run["server"], run["client"]), []).append(run)
    clients = list(dict.fromkeys(client for _, client in groups))
    servers = list(dict.fromkeys(server for server, _ in groups))
    lines = [
        f"Each server pinned to CPU 0 and restarted for every run; each client alone on CPU 1;"
        f" concurrency {record['concurrency']}, {record['requests']:,} calls per run,"
        f" {record['rounds']} interleaved rounds, medians: req/s (server CPU µs per call)."
        f" {_machine(record)}.",
        "",
        "| server | " + " | ".join(clients) + " | built-in verdicts |",
        "|---|" + "---|" * (len(clients) + 1),
    ]
    for server in servers:
        cells = []
        for client in clients:
            runs = groups.get((server, client), [])
            if not runs:
                cells.append("-")
                continue
            cost = [r["server_cpu_us_per_call"] for r in runs if r["server_cpu_us_per_call"]]
            shown = f" ({statistics.median(cost):.0f})" if cost else ""
            cells.append(f"{_median(runs, 'rps'):,.0f}{shown}")
        verdicts = ", ".join(
            dict.fromkeys(r["verdict"] for r in groups.get((server, "builtin"), []))
        )
        lines.append(f"| {server} | " + " | ".join(cells) + f" | {verdicts} |")
    return "\n".join(lines)


def render_ghz_compat() -> str:
    """ghz's flags as `run` takes them: the README's table is ``grpcbench.ghz_compat``."""
    from grpcbench import ghz_compat

    lines = ["| ghz flag | in grpcbench |", "|---|---|"]
    lines += [f"| `{flags}` | {meaning} |" for flags, meaning in ghz_compat.ACCEPTED.items()]
    lines += [f"| `{flags}` | refused: {why} |" for flags, why in ghz_compat.REFUSED.items()]
    return "\n".join(lines)


RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "crosscheck": render_crosscheck,
    "loadgen": render_loadgen,
    "streaming": render_streaming,
}


BLOCK = re.compile(r"<!-- results:([\w-]+) -->\n.*?<!-- /results:\1 -->", re.DOTALL)


def rendered(text: str) -> str:
    """``text`` with every results block regenerated from its saved results."""

    def block(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "ghz-compat":  # from the code, not from saved results
            return f"<!-- results:{name} -->\n{render_ghz_compat()}\n<!-- /results:{name} -->"
        path = RESULTS / f"{name}.json"
        record = json.loads(path.read_text())
        if record.get("tool") == "grpcbench":
            body = render_run(record, path)
        else:
            body = RENDERERS[record["benchmark"]](record)
        return f"<!-- results:{name} -->\n{body}\n<!-- /results:{name} -->"

    return BLOCK.sub(block, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a page is stale")
    args = parser.parse_args()
    stale = []
    for page in documents():
        text = page.read_text()
        new = rendered(text)
        if new != text:
            stale.append(page.relative_to(ROOT))
            if not args.check:
                page.write_text(new)
    if args.check and stale:
        names = ", ".join(map(str, stale))
        sys.exit(f"stale results blocks in {names}: run python scripts/render_results.py")
    for page in [] if args.check else stale:
        print(f"rewrote {page}")


if __name__ == "__main__":
    main()
