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
import shlex
import statistics
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grpcbench.model.results import RunRecord

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
README = ROOT / "README.md"


def documents() -> list[Path]:
    """Every page that may hold results blocks: the README and the docs site."""
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


LOADGEN_LABELS = {
    "h2load": "h2load (nghttp2), the request as a raw HTTP/2 body",
    "floor": "pure-Python floor: frames without gRPC's rules (`benchmarks/python_floor.py`)",
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
        ("builtin", "h2load", "goal: CPU ≤ 1.5x, rate ≥ 0.9x"),
        ("builtin", "ghz", "goal: CPU ≤ 0.4x"),
        ("builtin", "builtin@grpcio", ""),
        ("builtin@grpcio", "bare", ""),
        ("floor", "h2load", "CPython's own cost"),
        ("builtin", "floor", "the cost of gRPC's rules in Python"),
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
            "Open loop (`--rate`, 3 s per run, medians): does the generator keep its pacer?",
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
    return "\n".join(lines + ratios + _instructions_lines(record.get("instructions") or {}))


def _instructions_lines(figures: dict[str, float]) -> list[str]:
    """Instructions per call under callgrind (benchmarks/instructions.py), which load on
    the machine cannot move, with each client's ratio to h2load's and builtin / floor
    (issue 52's goal: at most 1.35x)."""
    if not figures:
        return []
    base = figures.get("h2load")
    lines = [
        "",
        "Instructions per unary call (callgrind: a run of 12,000 calls less one of 2,000,"
        " c=50, the same greeter), which load on the machine cannot move:",
        "",
        "| client | instructions per call | vs h2load |",
        "|---|---|---|",
    ]
    for client, count in figures.items():
        if client == "builtin-1000":
            continue  # not c=50 over one connection: its own line below
        ratio = f"{count / base:.2f}x" if base else "-"
        lines.append(f"| {LOADGEN_LABELS.get(client, client)} | {count:,.0f} | {ratio} |")
    if "builtin" in figures and "floor" in figures:
        lines += ["", f"- builtin / floor: **{figures['builtin'] / figures['floor']:.2f}x**"
                  " instructions per call"]  # fmt: skip
    if "builtin" in figures and "builtin-1000" in figures:
        lines.append(
            f"- builtin at c=1000 over 1,000 connections / builtin at c=50 over one:"
            f" **{figures['builtin-1000'] / figures['builtin']:.2f}x** instructions per call"
            " (goal ≤ 1.5x; the kernel's read() and write() per connection are not in it)"
        )
    return lines


def _median_latency(runs: list[dict[str, Any]], key: str) -> str:
    """The median of a per-run latency in us, as the tables print latencies; "-" where
    no run measured it (ghz times whole calls, a client stream has one reply)."""
    from grpcbench.base.units import format_latency_us

    values = [run[key] for run in runs if run.get(key) is not None]
    if not values:
        return "-"
    median = statistics.median(values)
    return f"{median:.0f} µs" if median < 1000 else format_latency_us(median)


def render_streaming(record: dict[str, Any]) -> str:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        groups.setdefault((run["method"], run["client"]), []).append(run)
    lines = [
        f"grpc-go's route_guide on CPU 0, the client on CPU 1; concurrency"
        f" {record['concurrency']}, {record['requests']:,} calls per run, {record['rounds']}"
        f" interleaved rounds (a fresh server each run), medians. {_machine(record)}.",
        "",
        "| method | client | req/s | client CPU µs per call | µs per reply message"
        " | first message p50 | message gap p50 | message gap p99 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (method, client), runs in groups.items():
        per_message = [r["cpu_per_message"] for r in runs if r.get("cpu_per_message")]
        timings = "".join(
            f" | {_median_latency(runs, key)}"
            for key in ("first_message_p50_us", "gap_p50_us", "gap_p99_us")
        )
        lines.append(
            f"| {method} | {client} | {_median(runs, 'rps'):,.0f}"
            f" | {_median(runs, 'cpu_per_call'):.1f}"
            f" | {(f'{statistics.median(per_message):.2f}') if per_message else '-'}{timings} |"
        )
    lines.append("")
    for method in dict.fromkeys(m for m, _ in groups):
        if (method, "builtin") in groups and (method, "ghz") in groups:
            ratio = _median(groups[(method, "builtin")], "rps") / _median(
                groups[(method, "ghz")], "rps"
            )
            lines.append(f"- {method}: built-in / ghz req/s **{ratio:.2f}x**")
        if (method, "builtin") in groups and (method, "floor") in groups:
            cost = _median(groups[(method, "builtin")], "cpu_per_message") / _median(
                groups[(method, "floor")], "cpu_per_message"
            )
            lines.append(
                f"- {method}: built-in / pure-Python floor, CPU per reply message **{cost:.2f}x**"
            )
    return "\n".join(lines)


def render_traffic(record: dict[str, Any]) -> str:
    """benchmarks/traffic.py: issues 42 and 53's goals on route_guide, medians and ratios."""
    medians, ratios = record["medians"], record["ratios"]
    lines = [
        f"grpc-go's route_guide on CPU 0, the generator on CPU 1; concurrency"
        f" {record['concurrency']}, {record['requests']:,} calls per run, {record['rounds']}"
        f" interleaved rounds, medians. {_machine(record)}.",
        "",
        "| run | figure |",
        "|---|---|",
    ]
    for name in ("GetFeature", "ListFeatures", "RecordRoute"):
        cpu = medians[f"single {name} cpu"]
        lines.append(f"| {name} alone | {cpu:.1f} µs client CPU per call |")
    lines += [
        f"| mix GetFeature 8, ListFeatures 1, RecordRoute 1 | {medians['mix cpu']:.1f} µs"
        " client CPU per call |",
        *(
            [f"| mix of GetFeature alone, in 3 entries | {same:.1f} µs client CPU per call |"]
            if (same := medians.get("mix of GetFeature x3 cpu")) is not None
            else []
        ),
        f"| GetFeature and ListFeatures, independent (a 1:1 mix) |"
        f" {medians['independent calls/s']:,.0f} calls/s |",
        f"| chain: GetFeature, then ListFeatures at its location |"
        f" {medians['chain calls/s']:,.0f} calls/s |",
        "",
    ]
    goals = {
        "mix / GetFeature alone, CPU per call": ("x", "goal ≤ 1.1x"),
        "mix / its methods one at a time (8:1:1), CPU per call": ("x", "goal ≤ 1.1x"),
        "mix of one method (3 entries) / that method alone, CPU per call": ("x", "goal ≤ 1.1x"),
        "chain / independent, calls/s": ("x", "goal ≥ 0.8x"),
        "open loop: worst |calls - share| per method": (" calls", "goal ≤ 1 call"),
    }
    for key, (unit, goal) in goals.items():
        if key in ratios:  # a file from before a figure was measured lacks it
            lines.append(f"- {key}: **{ratios[key]:.2f}{unit}** ({goal})")
    parts = sum(medians[f"single {name} cpu"] * weight for name, weight in (
        ("GetFeature", 8), ("ListFeatures", 1), ("RecordRoute", 1))) / 10  # fmt: skip
    lines.append(
        f"- its methods one at a time (8:1:1) / GetFeature alone, CPU per call:"
        f" {parts / medians['single GetFeature cpu']:.2f}x (what the first line would"
        " show for a mix that cost nothing: the stream methods' own cost)"
    )
    return "\n".join(lines + _traffic_instructions(record.get("instructions") or {}))


TRAFFIC_RUNS = {
    "GetFeature": "GetFeature alone", "ListFeatures": "ListFeatures alone",
    "RecordRoute": "RecordRoute alone", "mix": "mix GetFeature 8, ListFeatures 1, RecordRoute 1",
    "mix of GetFeature x3": "mix of GetFeature alone, in 3 entries",
    "independent": "GetFeature and ListFeatures, independent (a 1:1 mix)",
    "chain": "chain: GetFeature, then ListFeatures at its location (per step)",
}  # fmt: skip


def _traffic_instructions(counts: dict[str, float]) -> list[str]:
    """The generator's instructions per call under callgrind (benchmarks/traffic.py),
    which load on the machine cannot move: the same goals, judged on them."""
    if not counts:
        return []
    lines = [
        "",
        "The generator's instructions per call (callgrind: a run of 12,000 calls less one of"
        " 2,000; a chain's calls are its steps), which load on the machine cannot move:",
        "",
        "| run | instructions per call |",
        "|---|---|",
        *(f"| {TRAFFIC_RUNS.get(name, name)} | {count:,.0f} |" for name, count in counts.items()),
        "",
    ]
    parts = sum(counts[name] * weight for name, weight in (
        ("GetFeature", 8), ("ListFeatures", 1), ("RecordRoute", 1))) / 10  # fmt: skip
    lines += [
        f"- mix / its methods one at a time (8:1:1), instructions per call:"
        f" **{counts['mix'] / parts:.2f}x** (goal ≤ 1.1x)",
        f"- mix of one method (3 entries) / that method alone, instructions per call:"
        f" **{counts['mix of GetFeature x3'] / counts['GetFeature']:.2f}x** (goal ≤ 1.1x)",
        f"- chain / independent, instructions per call:"
        f" {counts['chain'] / counts['independent']:.2f}x",
    ]
    return lines


def render_traffic_run(path: Path, server: str = "route_guide") -> str:
    """A saved run with its command line and its (last) table: docs/mixes.md's route_guide
    runs, seed 004's watches per message."""
    from grpcbench.model.results_file import load_run
    from grpcbench.report.markdown import table_to_markdown
    from grpcbench.report.table import build_tables

    run = load_run(path)
    meta = run.metadata
    machine = f" on {meta.get('cpu_count')} CPUs, {meta.get('cpu_model')}; {server} on CPU 0"
    (table,) = build_tables(run.levels, run.unavailable)[-1:]
    return f"{_command_took(run, machine)}:\n\n" + table_to_markdown(table).rstrip()


def render_run(record: dict[str, Any], path: Path) -> str:
    """A saved ``grpcbench run --output`` file: its table at the highest concurrency
    (the front door shows one table), through grpcbench's own Markdown exporter; a
    ``grpcbench capacity`` file: its capacity tables and command."""
    from grpcbench.model.results_file import load_run
    from grpcbench.model.warmup import Warmup, describe_warmups
    from grpcbench.report.capacity import capacity_tables
    from grpcbench.report.markdown import table_to_markdown
    from grpcbench.report.table import build_tables

    run = load_run(path)
    meta, load = run.metadata, run.options.settings
    packages = meta.get("packages", {})
    machine = (
        f"{meta.get('cpu_count')} CPUs ({meta.get('cpu_model')}), Python {meta.get('python')},"
        f" grpcio {packages.get('grpcio')}, grpclib {packages.get('grpclib')}, uvloop"
        f" {packages.get('uvloop')}; {run.options.placement.describe()}"
    )
    capacity = capacity_tables(run)
    if capacity:
        intro = f"{_command_took(run)}: {machine}."
        return intro + "\n\n" + "\n".join(table_to_markdown(t) for t in capacity).rstrip()
    tables = build_tables(run.levels, run.unavailable)
    shown = tables[-1:]
    warmups = describe_warmups(Warmup.asked(load), (level.warmup for level in run.levels))
    intro = (
        f"`grpcbench run` on its defaults ({run.started_at[:10]}): {machine}; {load.describe()}"
        f" per level after {warmups}; client stack"
        f" {load.client_stack}. Shown: the last of its {len(tables)} levels; `grpcbench show"
        f" {path.relative_to(ROOT)}` prints them all."
    )
    return intro + "\n\n" + "\n".join(table_to_markdown(t) for t in shown).rstrip()


def _command_took(run: RunRecord, more: str = "") -> str:
    """A saved run's command line, its date and how long it took: "`grpcbench ...` (DATE,
    N min``more``)"."""
    took = (_parse_time(run.finished_at) - _parse_time(run.started_at)) / 60
    command = shlex.join(run.metadata.get("argv", [])[1:])  # as a shell would take it
    return f"`grpcbench {command}` ({run.started_at[:10]}, {took:.1f} min{more})"


def _parse_time(text: str | None) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text).timestamp() if text else 0.0


def render_crosscheck(record: dict[str, Any]) -> str:
    """Two tables: what each client achieved (and the server's CPU per call), then what
    each client spent per call (h2load's is the floor: no gRPC library at all)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        groups.setdefault((run["server"], run["client"]), []).append(run)
    clients = list(dict.fromkeys(client for _, client in groups))
    servers = list(dict.fromkeys(server for server, _ in groups))
    server_cost = _medians(groups, "server_cpu_us_per_call")
    client_cost = _medians(groups, "client_cpu_us_per_call")
    spreads = []
    for server in servers:
        served = [server_cost[server, c] for c in clients if (server, c) in server_cost]
        if served:
            low, high = min(served), max(served)
            spreads.append(f"{server} {low:.0f}-{high:.0f} µs ({high / low:.2f}x)")
    header = "| server | " + " | ".join(clients)
    rule = "|---|" + "---|" * len(clients)
    lines = [
        f"Each server pinned to CPU 0 and restarted for every run; each client alone on CPU 1;"
        f" concurrency {record['concurrency']}, {record['requests']:,} calls per run,"
        f" {record['rounds']} interleaved rounds, medians: req/s (server CPU µs per call)."
        f" {_machine(record)}. The server's CPU per call across the clients:"
        f" {', '.join(spreads)}.",
        "",
        header + " | built-in verdicts |",
        rule + "---|",
    ]
    spent = ["", "What each client spent, CPU µs per call (medians of the same runs):", ""]
    spent += [header + " |", rule]
    for server in servers:
        cells: list[str] = []
        costs: list[str] = []
        for client in clients:
            runs = groups.get((server, client), [])
            cost = server_cost.get((server, client))
            shown = f" ({cost:.0f})" if cost else ""
            cells.append(f"{_median(runs, 'rps'):,.0f}{shown}" if runs else "-")
            own = client_cost.get((server, client))
            costs.append(f"{own:.1f}" if own else "-")
        verdicts = ", ".join(
            dict.fromkeys(r["verdict"] for r in groups.get((server, "builtin"), []))
        )
        lines.append(f"| {server} | " + " | ".join(cells) + f" | {verdicts} |")
        spent.append(f"| {server} | " + " | ".join(costs) + " |")
    return "\n".join(lines + spent + _client_cost_ratios(client_cost, servers))


def _medians(
    groups: dict[tuple[str, str], list[dict[str, Any]]], key: str
) -> dict[tuple[str, str], float]:
    """Per (server, client), the median of ``key`` over the runs that measured it."""
    found = {}
    for pair, runs in groups.items():
        values = [run[key] for run in runs if run.get(key)]
        if values:
            found[pair] = statistics.median(values)
    return found


def _client_cost_ratios(client_cost: dict[tuple[str, str], float], servers: list[str]) -> list[str]:
    """The built-in driver's CPU per call over each other client's, per server."""
    lines = []
    for other in ("h2load", "builtin@grpcio", "ghz"):
        ratios = [
            f"{server} {client_cost[server, 'builtin'] / client_cost[server, other]:.2f}x"
            for server in servers
            if (server, "builtin") in client_cost and (server, other) in client_cost
        ]
        if ratios:
            lines.append(f"- builtin / {other}, CPU per call: {', '.join(ratios)}")
    return ["", *lines] if lines else []


def render_ghz_compat() -> str:
    """ghz's flags as `run` takes them: docs/own-service.md's table, from ``run.ghz_promises``."""
    from grpcbench.run import ghz_promises

    lines = ["| ghz flag | in grpcbench |", "|---|---|"]
    lines += [f"| `{flags}` | {meaning} |" for flags, meaning in ghz_promises.ACCEPTED.items()]
    lines += [f"| `{flags}` | refused: {why} |" for flags, why in ghz_promises.REFUSED.items()]
    return "\n".join(lines)


def render_ghz_differences() -> str:
    """What a server sees differ between ghz and grpcbench: ``ghz_promises.DIFFERENCES``,
    each allowed by the conformance suite (tests/conformance) on the lines that list it."""
    from grpcbench.run import ghz_promises

    lines = ["| difference | what the server sees, and why |", "|---|---|"]
    lines += [f"| `{name}` | {why} |" for name, why in ghz_promises.DIFFERENCES.items()]
    return "\n".join(lines)


def render_grpcurl_differences() -> str:
    """Where `list`/`describe` print other than grpcurl: ``GRPCURL_DIFFERENCES``."""
    from grpcbench.cli.listing_commands import GRPCURL_DIFFERENCES

    if not GRPCURL_DIFFERENCES:
        return "None: every case prints what grpcurl prints, and fails where it fails."
    lines = ["| difference | what each prints |", "|---|---|"]
    lines += [f"| `{name}` | {why} |" for name, why in GRPCURL_DIFFERENCES.items()]
    return "\n".join(lines)


def render_ghz_flags() -> str:
    """The README's short form of the ghz table: every flag by name, taken or refused."""
    import textwrap

    from grpcbench.run import ghz_promises

    def names(groups: Iterable[str]) -> str:
        flags = [flag for group in groups for flag in group.split(", ") if flag.startswith("-")]
        return " ".join(f"`{flag}`" for flag in flags)

    taken = (
        f"Taken: {names(ghz_promises.ACCEPTED)}, and `HOST:PORT` (also as `dns:///HOST:PORT` or"
        " `passthrough:///HOST:PORT`)."
    )
    refused = (
        f"Refused, each with its reason and what to give instead: {names(ghz_promises.REFUSED)}."
        if ghz_promises.REFUSED
        else "Refused: none of ghz v0.120's flags."
    )
    paragraphs = (textwrap.fill(text, 100, break_on_hyphens=False) for text in (taken, refused))
    return "\n\n".join(paragraphs)


def _seed_intro(record: dict[str, Any]) -> str:
    """How a seed's figures were measured: the machine, the commands, the date."""
    commands = "\n".join(f"    {command}" for command in record["commands"])
    if record["rounds"] == 1:
        return (
            f"Measured by `nox -s figures` on {record['date'][:10]}:"
            f" {_machine(record)}; one run of\n\n{commands}\n"
        )
    return (
        f"Measured by `nox -s figures` on {record['date'][:10]}:"
        f" {_machine(record)}; {record['rounds']} interleaved rounds of\n\n{commands}\n\n"
        "medians of the rounds:\n"
    )


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value / 2**20:,.0f} MiB"


# The seed's own figures (its text, ../shared/seeds/001_*.txt), for the side-by-side.
SEED_001_OWN = {
    "Go greeter, trivial": "31,533 / 3,101 / ~3,000",
    "grpcio-aio, trivial": "(a Go server)",
    "grpcio-aio, trivial, beside 4 CPU hogs": "(a Go server)",
    "grpcio-aio, sleeps 0.5 s": "198 / 189 / 189",
}


def render_seed_001(record: dict[str, Any]) -> str:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        groups.setdefault((run["group"], run["label"]), []).append(run)
    strategies = list(dict.fromkeys(label for _, label in groups))
    lines = [
        _seed_intro(record),
        "| server, handler | " + " | ".join(strategies)
        + " | connections opened per call (checkout:10) | the seed (shared / pool / per-request) |",
        "|---|" + "---|" * (len(strategies) + 2),
    ]  # fmt: skip
    for handler in dict.fromkeys(group for group, _ in groups):
        cells = []
        for strategy in strategies:
            runs = groups[(handler, strategy)]
            verdicts = "/".join(dict.fromkeys(str(r["verdict"]) for r in runs))
            cells.append(f"{_median(runs, 'rps'):,.0f} req/s ({verdicts})")
        pool = groups[(handler, "checkout:10")]
        churn = statistics.median(r["connects"] / r["calls"] for r in pool if r["calls"])
        lines.append(
            f"| {handler} | " + " | ".join(cells) + f" | {churn:.2f} | {SEED_001_OWN[handler]} |"
        )
    for server in [g for g in dict.fromkeys(g for g, _ in groups) if "trivial" in g]:
        rps = {s: _median(groups[(server, s)], "rps") for s in strategies}
        lines += [
            "",
            f"{server}: shared / checkout:10 **{rps['shared'] / rps['checkout:10']:.1f}x**,"
            f" shared / per-request **{rps['shared'] / rps['per-request']:.1f}x**"
            " (the seed: about 10x both).",
        ]  # fmt: skip
    return "\n".join(lines)


# The seed's own figures (../shared/seeds/000_*.txt; Go client and server, MySQL in a
# container): seconds per fetch-all, B/op and allocs/op per variant.
SEED_000_OWN = {
    "18K": {
        "paginate": (5.729, 15_748_736, 222_302), "stream-fetch-1": (5.767, 15_387_366, 219_532),
        "stream-fetch-10": (2.087, 15_504_884, 219_983),
        "stream-fetch-100": (1.955, 15_444_297, 219_882),
    },
    "1.04M": {
        "paginate": (191.7, 889_266_160, 12_768_022),
        "stream-fetch-1": (190.0, 865_303_704, 12_596_571),
        "stream-fetch-10": (41.8, 870_448_160, 12_613_615),
        "stream-fetch-100": (39.5, 870_049_200, 12_618_855),
    },
}  # fmt: skip


def _seconds(value: float) -> str:
    return f"{value * 1e3:,.0f} ms" if value < 1 else f"{value:,.1f} s"


def _gain(
    cells: dict[tuple[str, str, str], list[dict[str, Any]]], group: str, server: str, variant: str
) -> str:
    """A variant's gain over paginate, round by round (rounds are interleaved, so each
    round's pair ran side by side): their mean ± standard deviation, as compare shows
    a figure over repeats."""
    from grpcbench.report.figures import Spread

    paginate = {r["round"]: r["mean_us"] for r in cells[(group, server, "paginate")]}
    ratios = [
        paginate[r["round"]] / r["mean_us"]
        for r in cells[(group, server, variant)]
        if r["round"] in paginate and r["mean_us"]
    ]
    if not ratios:
        return "-"
    return Spread.of(ratios).format(lambda value: f"{value:.2f}x")


def render_seed_000(record: dict[str, Any]) -> str:
    """Per database placement and server: mean time per fetch-all and the gain over
    paginating; the database's CPU per fetch-all; then the client's memory per call."""
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        cells.setdefault((run["group"], run["server"], run["variant"]), []).append(run)
    variants = list(dict.fromkeys(variant for _, _, variant in cells))
    case = record["runs"][0]["label"]
    own = SEED_000_OWN[case]
    lines = [
        _seed_intro(record),
        "Mean time per fetch-all (median of the rounds), and its gain over paginate: each"
        " round's paginate over its own time, the mean ± standard deviation of the rounds"
        " (the rounds' ratios swing: read a gain with its spread); at stream-fetch-10, the"
        " database's CPU per fetch-all, and the floor it sets: that CPU over the database's"
        " CPUs.",
        "",
        "| database | server | " + " | ".join(variants)
        + " | database CPU / fetch-all | floor |",
        "|---|---|" + "---|" * (len(variants) + 2),
    ]  # fmt: skip
    for group, server in dict.fromkeys((g, sv) for g, sv, _ in cells):
        means = {v: _median(cells[(group, server, v)], "mean_us") / 1e6 for v in variants}
        shown = [f"{_seconds(means[v])} ({_gain(cells, group, server, v)})" for v in variants]
        fetch10 = cells[(group, server, "stream-fetch-10")]
        database = [
            (cpu / r["calls"], r["backing_cores"][name])
            for r in fetch10 for name, cpu in r["backing_cpu_s"].items() if r["calls"]
        ]  # fmt: skip
        if database:
            per_call = statistics.median(cpu for cpu, _ in database)
            cores = database[0][1]
            figures = f"{_seconds(per_call)} | {_seconds(per_call / cores)} on {cores:g} CPU(s)"
        else:
            figures = "(in the server) | -"
        lines.append(f"| {group} | {server} | " + " | ".join(shown) + f" | {figures} |")
    seed_cells = [
        f"{_seconds(own[v][0])} ({own['paginate'][0] / own[v][0]:.2f}x)" for v in variants
    ]
    lines.append("| the seed: MySQL in a container | Go | " + " | ".join(seed_cells) + " | - | - |")
    traced = [r for r in record["runs"] if r.get("client_allocations")]
    if traced:
        servers = list(dict.fromkeys(r["server"] for r in traced))
        lines += [
            "",
            "The client's memory per fetch-all (`--client-allocations 3`: an untimed pass traced"
            " by memray; built-in client, wire stack), bytes / allocations, beside the seed's"
            " B/op / allocs/op:",
            "",
            "| variant | " + " | ".join(servers) + " | the seed (Go) |",
            "|---|" + "---|" * (len(servers) + 1),
        ]
        for variant in variants:
            row = []
            for server in servers:
                runs = [r for r in traced if r["server"] == server and r["variant"] == variant]
                size = statistics.median(r["client_allocations"]["bytes_per_call"] for r in runs)
                count = statistics.median(
                    r["client_allocations"]["allocations_per_call"] for r in runs
                )
                row.append(f"{size / 2**20:,.1f} MiB / {count:,.0f}")
            _, seed_bytes, seed_allocs = own[variant]
            seed = f"{seed_bytes / 2**20:,.1f} MiB / {seed_allocs:,}"
            lines.append(f"| {variant} | " + " | ".join(row) + f" | {seed} |")
    return "\n".join(lines)


# The seed's own TPS per client count (../shared/seeds/003_*.txt; a Go client and server).
SEED_003_OWN = {1: "4,087", 10: "15,964", 15: "18,087", 20: "15,532"}


def render_seed_003(record: dict[str, Any]) -> str:
    cells: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        cells.setdefault((run["concurrency"], run["server"]), []).append(run)
    servers = list(dict.fromkeys(server for _, server in cells))
    lines = [
        _seed_intro(record),
        "| clients | " + " | ".join(servers) + " | the seed (Go) |",
        "|---|" + "---|" * (len(servers) + 1),
    ]
    for clients in sorted(dict.fromkeys(c for c, _ in cells)):
        row = []
        for server in servers:
            runs = cells[(clients, server)]
            verdicts = "/".join(dict.fromkeys(str(r["verdict"]) for r in runs))
            row.append(f"{_median(runs, 'rps'):,.0f} req/s ({verdicts})")
        own = SEED_003_OWN.get(clients, "-")
        lines.append(f"| {clients} | " + " | ".join(row) + f" | {own} |")
    gains = []
    for server in servers:
        one, ten = (_median(cells[(c, server)], "rps") for c in (1, 10))
        gains.append(f"{server} **{ten / one:.1f}x**")
    lines += ["", "From 1 to 10 clients: " + ", ".join(gains) + " (the seed: 3.9x)."]
    return "\n".join(lines)


def render_seed_004(record: dict[str, Any]) -> str:
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        cache = run["variant"].rsplit("-", 1)[-1]
        cells.setdefault((run["server"], cache), []).append(run)
    caches = list(dict.fromkeys(cache for _, cache in cells))
    lines = [
        _seed_intro(record),
        "| server | " + " | ".join(f"{cache}: CPU / peak RSS" for cache in caches) + " |",
        "|---|" + "---|" * len(caches),
    ]
    for server in dict.fromkeys(server for server, _ in cells):
        row = []
        for cache in caches:
            runs = cells.get((server, cache), [])
            cpu = [r["server_cpu_s"] for r in runs if r["server_cpu_s"] is not None]
            rss = [r["server_peak_rss_bytes"] for r in runs if r["server_peak_rss_bytes"]]
            row.append(
                f"{statistics.median(cpu):.2f} s / {_mib(statistics.median(rss))}" if cpu and rss
                else "-"
            )  # fmt: skip
        lines.append(f"| {server} | " + " | ".join(row) + " |")
    return "\n".join(lines)


# The seed's concurrency-10 row (its text, ../shared/seeds/002_*.txt): requests/sec.
SEED_002_OWN = {
    "grpcio:workers=1": "1.72", "grpcio:workers=10": "3.05", "grpclib": "3.21",
    "grpclib+uvloop": "3.33", "grpcio-aio": "(not in the seed)",
}  # fmt: skip


def render_seed_002(record: dict[str, Any]) -> str:
    by_server: dict[str, list[dict[str, Any]]] = {}
    for run in record["runs"]:
        by_server.setdefault(run["server"], []).append(run)
    lines = [
        _seed_intro(record),
        "| server | requests/sec | average | verdict | the seed: requests/sec |",
        "|---|---|---|---|---|",
    ]
    for server, runs in by_server.items():
        lines.append(
            f"| {server} | {_median(runs, 'rps'):.2f} | {_median(runs, 'mean_us') / 1e6:.2f} s"
            f" | {runs[-1]['verdict']} | {SEED_002_OWN.get(server, '-')} |"
        )
    return "\n".join(lines)


def render_seed_002_unavailable(record: dict[str, Any]) -> str:
    """Unavailable calls per cell, a row per stack, server and concurrency."""
    clients = list(dict.fromkeys(cell["client"] for cell in record["cells"]))
    labels = {
        "builtin": "built-in (wire)", "builtin-grpcio": "built-in (grpc.aio)",
        "ghz": "ghz (today's)",
    }  # fmt: skip
    lines = [
        f"`nox -s seed002` ({record['date'][:10]}):"
        f" {_machine(record)}; {record['requests']} StreamObjects calls per cell, a fresh"
        " server each. Unavailable calls per cell:",
        "",
        "| stack | server | c | " + " | ".join(labels.get(c, c) for c in clients) + " |",
        "|---|---|---|" + "---|" * len(clients),
    ]
    rows: dict[tuple[str, str, int], dict[str, dict[str, Any]]] = {}
    for cell in record["cells"]:
        key = (cell["stack"], cell["server"], cell["concurrency"])
        rows.setdefault(key, {})[cell["client"]] = cell
    for (stack, server, concurrency), by_client in rows.items():
        shown = [
            f"{by_client[c]['unavailable']}" + (f" (+{by_client[c]['other']} other)"
                                                if by_client[c]["other"] else "")
            if c in by_client else "-"
            for c in clients
        ]  # fmt: skip
        lines.append(f"| {stack} | {server} | {concurrency} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def render_seed_004_500(record: dict[str, Any]) -> str:
    """500 streams at once per variant and kind, and what each holds after the burst."""
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        cells.setdefault((run["variant"], run["server"]), []).append(run)
    idle = max((run.get("cooldown_s") or 0.0) for run in record["runs"])
    lines = [
        _seed_intro(record),
        f"| variant | server | server CPU | wall | peak RSS | RSS after {idle:g} s idle"
        " | req/s | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (variant, server), runs in cells.items():
        after = [r["server_rss_after_cooldown_bytes"] for r in runs
                 if r.get("server_rss_after_cooldown_bytes")]  # fmt: skip
        lines.append(
            f"| {variant} | {server} | {_median(runs, 'server_cpu_s'):.2f} s"
            f" | {_median(runs, 'wall_s'):.1f} s | {_mib(_median(runs, 'server_peak_rss_bytes'))}"
            f" | {_mib(statistics.median(after)) if after else '-'}"
            f" | {_median(runs, 'rps'):,.0f} | {runs[-1]['verdict']} |"
        )
    return "\n".join(lines)


def render_profile_overhead(record: dict[str, Any]) -> str:
    servers = list(dict.fromkeys(run["server"] for run in record["runs"]))
    lines = [
        f"Concurrency 50, {record['rounds']} interleaved rounds, a fresh server each run,"
        f" medians. {_machine(record)}.",
        "",
        "| server | req/s | with `--profile` (100 Hz) | ratio | with `--profile-native` | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for server in servers:
        rps = {
            mode: _median([r for r in record["runs"] if r["server"] == server
                           and r["mode"] == mode], "rps")
            for mode in ("plain", "profile", "native")
        }  # fmt: skip
        plain = rps["plain"]
        lines.append(
            f"| {server} | {plain:,.0f} | {rps['profile']:,.0f} | **{rps['profile'] / plain:.3f}**"
            f" | {rps['native']:,.0f} | {rps['native'] / plain:.3f} |"
        )
    return "\n".join(lines)


def render_profile_hello(path: Path, differential: bool = True) -> str:
    """A saved ``run --profile`` of hello: per kind its server CPU per call and top
    functions, then (unless ``differential`` is false) the differential grpcbench prints."""
    from grpcbench.model.results_file import load_run
    from grpcbench.profile.model import Profile
    from grpcbench.report.markdown import table_to_markdown
    from grpcbench.report.profiles import PYTHON_ONLY, differential_table

    run = load_run(path)
    levels = [level for level in run.levels if level.profile]
    meta = run.metadata
    shown = 5
    argv = list(meta.get("argv") or [])[1:]
    if "--output" in argv:  # the saved file is this page's source, named below
        at = argv.index("--output")
        del argv[at : at + 2]
    lines = [
        f"`grpcbench {' '.join(argv)}` on {meta.get('cpu_count')} CPUs"
        f" ({meta.get('cpu_model')}), Python {meta.get('python')}, grpcio"
        f" {meta.get('packages', {}).get('grpcio')}, {run.started_at[:10]}. Self shares (the"
        " innermost frame), library internals folded into one line each."
        + ("" if any(Profile.from_json(lv.profile).native for lv in run.levels if lv.profile)
           else f" {PYTHON_ONLY}"),
        "",
        "| | " + " | ".join(level.server for level in levels) + " |",
        "|---|" + "---|" * len(levels),
        "| server CPU per call | " + " | ".join(
            f"{level.server_cpu_us_per_call:.0f} µs" if level.server_cpu_us_per_call else "-"
            for level in levels
        ) + " |",
        "| samples | " + " | ".join(
            f"{Profile.from_json(level.profile).samples:,}" for level in levels  # type: ignore[arg-type]
        ) + " |",
    ]  # fmt: skip
    tops = [Profile.from_json(level.profile).top for level in levels]  # type: ignore[arg-type]
    for rank in range(shown):
        cells = [
            f"{top[rank].function} {top[rank].self_share:.0%}" if rank < len(top) else ""
            for top in tops
        ]
        lines.append(f"| top {rank + 1} | " + " | ".join(cells) + " |")
    compared = differential_table(levels) if differential else None
    if compared is not None:
        lines += [
            "",
            table_to_markdown(compared).replace("#### ", "**", 1).replace("\n", "**\n", 1),
        ]
    return "\n".join(lines).rstrip()


def render_large_messages(record: dict[str, Any]) -> str:
    """Client CPU per MB of large messages on both stacks, both ways, with and without
    --max-send-message-size, their ratio (issue 52's goal: wire at most 1.0x grpc.aio's)
    and page faults per call."""
    cells: dict[tuple[str, int, str, str], list[dict[str, Any]]] = {}
    for run in record["runs"]:
        key = (run["kind"], run["size_mb"], run.get("flags", "plain"), run["stack"])
        cells.setdefault(key, []).append(run)
    lines = [
        f"grpc-go's interop TestService on CPU 0, the client on CPU 1: `UnaryCall` replies"
        f" and requests, and streams of {record['stream_messages']} messages of each size"
        f" (`StreamingOutputCall` replies, `StreamingInputCall` requests); each plain and"
        f" with `--max-send-message-size`. {record['rounds']} interleaved rounds (a fresh"
        f" server each run{_megabytes_per_run(record)}), medians; page faults per call are"
        f" the run's less those of a run of one measured call after the same warm-up, over"
        f" the difference of calls (noise below zero shows as 0). {_machine(record)}.",
        "",
        "| message | size | flag | wire: client CPU per MB | grpc.aio: client CPU per MB"
        " | wire / grpc.aio | page faults per call: wire, grpc.aio |",
        "|---|---|---|---|---|---|---|",
    ]
    names = {"unary": "reply", "stream": "stream-reply"}  # files saved before requests
    for kind, size, flags in dict.fromkeys((k, sz, f) for k, sz, f, _ in cells):
        wire, aio = (_median(cells[(kind, size, flags, stack)], "cpu_ms_per_mb")
                     for stack in ("wire", "grpcio"))  # fmt: skip
        faults = [
            f"{max(0.0, _median(cells[(kind, size, flags, stack)], 'faults_per_call')):,.0f}"
            if "faults_per_call" in cells[(kind, size, flags, stack)][0] else "-"
            for stack in ("wire", "grpcio")
        ]  # fmt: skip
        flag = "`--max-send-message-size`" if flags == "limits" else "-"
        lines.append(
            f"| {names.get(kind, kind)} | {size} MB | {flag} | {wire:.2f} ms | {aio:.2f} ms"
            f" | **{wire / aio:.2f}x** | {', '.join(faults)} |"
        )
    return "\n".join(lines)


def _megabytes_per_run(record: dict[str, Any]) -> str:
    """How much each measured run moved (saved since it rose from 128 MB to 1 GB)."""
    size = record.get("mb_per_run")
    return f", {size:,} MB of messages measured per run" if size else ""


def render_telemetry_overhead(record: dict[str, Any]) -> str:
    """What --prometheus and --otlp cost the generator per call and the coordinator, as
    medians beside the runs without telemetry (issue 52's goal: both exporters at most
    5% of a core more for the coordinator at 20,000 calls/s)."""
    modes = list(dict.fromkeys(run["mode"] for run in record["runs"]))
    cells = {mode: [run for run in record["runs"] if run["mode"] == mode] for mode in modes}
    off_generator = _median(cells["off"], "generator_us_per_call")
    off_share = _median(cells["off"], "coordinator_share")
    lines = [
        f"The Go greeter on CPU 0, `grpcbench run --target ... --rate {record['rate']:g}"
        f" -z {record['seconds']:g}s` on CPU 1, {record['rounds']} interleaved rounds,"
        f" medians; the coordinator's own CPU (its children's not counted) over each run's"
        f" wall time, start-up included. {_machine(record)}.",
        "",
        "| telemetry | generator CPU per call | vs none | coordinator, share of a core"
        " | more than none | intervals late, worst of the rounds |",
        "|---|---|---|---|---|---|",
    ]
    names = {"off": "none", "prometheus": "`--prometheus`", "otlp": "`--otlp`",
             "both": "`--prometheus` and `--otlp`"}  # fmt: skip
    for mode in modes:
        generator = _median(cells[mode], "generator_us_per_call")
        share = _median(cells[mode], "coordinator_share")
        # Files from before the coordinator measured it have none; none without --interval.
        lates = [run["interval_late_s"] for run in cells[mode]
                 if run.get("interval_late_s") is not None]  # fmt: skip
        lines.append(
            f"| {names.get(mode, mode)} | {generator:.2f} us | {generator / off_generator:.2f}x"
            f" | {share:.1%} | **{share - off_share:+.1%}** |"
            f" {f'{max(lates):.2f} s' if lates else '-'} |"
        )
    return "\n".join(lines)


def render_startup(record: dict[str, Any]) -> str:
    """benchmarks/startup.py: what a user waits for before any call, medians side by side."""
    medians, ratios = record["medians"], record["ratios"]
    lines = [
        f"The Go greeter; {record['rounds']} interleaved rounds, median wall time per command."
        f" {_machine(record)}.",
        "",
        "| command | wall time |",
        "|---|---|",
        *(f"| {name} | {seconds:.3f} s |" for name, seconds in medians.items()),
        "",
        *(f"- {key}: **{value:.1f}x**" for key, value in ratios.items()),
    ]
    return "\n".join(lines)


RUN_PARTS = {
    "measured_s": "measured phases",
    "around_measured_s": "around them: warm-up calls, connections, results",
    "between_levels_s": "between levels: mostly server kinds stopping and starting",
    "before_first_s": "before the first level: imports, options, the first server",
    "after_last_s": "after the last level: tables, files, exit",
}


def render_run_overhead(record: dict[str, Any]) -> str:
    """benchmarks/run_overhead.py: a default run's wall time by part, with and without
    its warm-up calls, medians side by side."""
    medians = record["medians"]
    names = list(medians)
    lines = [
        f"`grpcbench run` on its defaults ({medians[names[0]]['levels']:.0f} levels);"
        f" {record['rounds']} interleaved rounds, medians. {_machine(record)}.",
        "",
        "| | " + " | ".join(f"`{name}`" if name.startswith("-") else name for name in names) + " |",
        "|---|" + "---|" * len(names),
        "| whole run | " + " | ".join(f"{medians[n]['whole_s']:.1f} s" for n in names) + " |",
        *(
            f"| {label} | " + " | ".join(f"{medians[n][key]:.2f} s" for n in names) + " |"
            for key, label in RUN_PARTS.items()
        ),
        "",
        *(
            f"- {name}: **{medians[name]['outside_share']:.1%}** of the run outside its measured"
            " phases (goal ≤ 10%)"
            for name in names
        ),
    ]
    return "\n".join(lines)


def render_warmup(record: dict[str, Any]) -> str:
    """benchmarks/warmup_effect.py: a fresh server's first calls after each warm-up, and
    a later level on the same server beside that level alone on a fresh one."""
    medians: dict[str, dict[str, dict[str, float]]] = record["medians"]
    fresh = [arm for arm in medians if arm.startswith("fresh")]
    servers = list(medians[fresh[0]])
    ms = "{:.3f}".format
    lines = [
        f"{record['rounds']} interleaved rounds, medians. {_machine(record)}.",
        "",
        "A fresh server's first 300 calls at concurrency 2, after a warm-up of N calls"
        " (p50 / p99, ms):",
        "",
        "| server | " + " | ".join(arm.removeprefix("fresh, ") for arm in fresh) + " |",
        "|---|" + "---|" * len(fresh),
        *(
            f"| {server} | "
            + " | ".join(
                f"{ms(medians[arm][server]['p50_ms'])} / {ms(medians[arm][server]['p99_ms'])}"
                for arm in fresh
            )
            + " |"
            for server in servers
        ),
        "",
        "A later level on the same server (after its users' first 2 calls each) over that"
        " level alone on a fresh server (after 500 calls):",
        "",
        "| server | level | warm-up calls | p50 ratio | p99 ratio | req/s ratio |",
        "|---|---|---|---|---|---|",
    ]
    later = [arm for arm in medians if "same server" in arm]
    for arm in later:
        level = arm.split(" ")[0]
        alone = medians[f"{level} alone, fresh server"]
        for server, figures in medians[arm].items():
            base = alone[server]
            lines.append(
                f"| {server} | {level} | {figures['warmup_requests']:.0f} |"
                f" {figures['p50_ms'] / base['p50_ms']:.2f}x |"
                f" {figures['p99_ms'] / base['p99_ms']:.2f}x |"
                f" {figures['rps'] / base['rps']:.2f}x |"
            )
    spreads = _round_spreads(record["samples"], "alone, fresh server")
    lines += [
        "",
        f"The same level alone on a fresh server, run {record['rounds']} times: its slowest"
        f" round over its fastest is {statistics.median(spreads['p50_ms']):.2f}x in p50 and"
        f" {statistics.median(spreads['p99_ms']):.2f}x in p99 (medians over servers and"
        f" levels; at most {max(spreads['p50_ms']):.2f}x and {max(spreads['p99_ms']):.2f}x).",
    ]
    return "\n".join(lines)


def _round_spreads(samples: list[dict[str, Any]], arm_suffix: str) -> dict[str, list[float]]:
    """For each (arm, server) ending in ``arm_suffix``: the largest figure over the
    rounds divided by the smallest, per figure."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in samples:
        if str(row["arm"]).endswith(arm_suffix):
            grouped.setdefault((row["arm"], row["server"]), []).append(row)
    return {
        key: [max(r[key] for r in rows) / min(r[key] for r in rows) for rows in grouped.values()]
        for key in ("p50_ms", "p99_ms")
    }


RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "warmup": render_warmup,
    "large-messages": render_large_messages,
    "run-overhead": render_run_overhead,
    "startup": render_startup,
    "profile-overhead": render_profile_overhead,
    "seed-000": render_seed_000,
    "seed-000-large": render_seed_000,
    "seed-001": render_seed_001,
    "seed-003": render_seed_003,
    "seed-002": render_seed_002,
    "seed-002-unavailable": render_seed_002_unavailable,
    "seed-004": render_seed_004,
    "seed-004-500": render_seed_004_500,
    "seed-004-minute": render_seed_004_500,
    "crosscheck": render_crosscheck,
    "loadgen": render_loadgen,
    "streaming": render_streaming,
    "traffic": render_traffic,
    "telemetry-overhead": render_telemetry_overhead,
}


# Saved grpcbench runs rendered their own way (other runs: ``render_run``).
def render_capacity_summary(path: Path) -> str:
    """The front door's view of a ``grpcbench capacity`` file: its command and each
    SLO's capacity table, cut to the rows a reader compares first (the docs'
    capacity page renders the whole file, every probe included)."""
    from dataclasses import replace

    from grpcbench.capacity.record import CapacityRecord
    from grpcbench.model.results_file import load_run
    from grpcbench.report.capacity import capacity_table
    from grpcbench.report.markdown import table_to_markdown

    run = load_run(path)
    record = CapacityRecord.of(run)
    assert record is not None, f"{path} is not a capacity run"
    meta = run.metadata
    keep = ("Capacity", "Confirmed", "p99 at capacity", "Server CPU / call")
    tables = [
        replace(table, rows=tuple(row for row in table.rows if row[0] in keep), notes=())
        for table in (capacity_table(run, record, slo.text) for slo in record.settings.slos)
    ]
    placement = run.options.placement.describe()
    machine = f" on {meta.get('cpu_count')} CPUs, {meta.get('cpu_model')}; {placement}"
    intro = f"{_command_took(run, machine)}:"
    return intro + "\n\n" + "\n".join(table_to_markdown(t) for t in tables).rstrip()


RUN_RENDERERS: dict[str, Callable[[Path], str]] = {
    "profile-hello": render_profile_hello,
    "capacity-summary": render_capacity_summary,
    "profile-hello-top": lambda path: render_profile_hello(path, differential=False),
    "route-guide-mix": render_traffic_run,
    "route-guide-feed": render_traffic_run,
    "route-guide-chain": render_traffic_run,
    "route-guide-scenarios": render_traffic_run,
    "watch-messages": lambda path: render_traffic_run(path, "each server"),
}
# Blocks rendered from grpcbench's code, not from saved results.
CODE_RENDERERS: dict[str, Callable[[], str]] = {
    "ghz-compat": render_ghz_compat,
    "ghz-differences": render_ghz_differences,
    "grpcurl-differences": render_grpcurl_differences,
    "ghz-flags": render_ghz_flags,
}


@dataclass(frozen=True)
class Capture:
    """A command's terminal output on saved results, as a reader's terminal shows it."""

    argv: tuple[str, ...]  # after `grpcbench`
    columns: int = 120
    start_at: str = ""  # the output from the first line that starts with this
    after: str = ""  # the output after the first line that starts with this
    stop_at: str = ""  # up to the first line after that starts with this


# Terminal output shown on a page: rerun, never pasted.
CAPTURES: dict[str, Capture] = {
    "show-default-run": Capture(
        ("show", "docs/results/default-run.json"), start_at="hello - concurrency 50"
    ),
    "show-echo-scenario": Capture(
        ("show", "docs/results/echo-scenario.json"),
        start_at="echo - concurrency 10",
        stop_at="echo - concurrency 50",
    ),
    "show-echo-ghz-unary": Capture(("show", "docs/results/echo-ghz-unary.json"), stop_at="Summary"),
    "show-echo-ghz-expand": Capture(
        ("show", "docs/results/echo-ghz-expand.json"), stop_at="Summary"
    ),
    # `grpcbench history` over the saved step series (tests/test_history_detection.py).
    "history-step": Capture(("history", "docs/results/history", "step"), columns=100),
    # The same against flat, the unchanged server run beside it (`history --control flat`).
    "history-step-control": Capture(
        ("history", "docs/results/history", "step", "flat"), columns=100, after="└"
    ),
}


def render_capture(capture: Capture) -> str:
    """Run in this process on a console of ``capture.columns``, as a terminal that wide
    shows it (piped, grpcbench's console is wider than any terminal)."""
    import io

    from rich.console import Console

    from grpcbench.cli.consoles import Consoles
    from grpcbench.cli.saved_commands import show

    assert capture.argv[0] in ("show", "history"), capture.argv
    screen, messages = io.StringIO(), io.StringIO()
    console = Console(file=screen, width=capture.columns, color_system=None, soft_wrap=False)
    consoles = Consoles(console, Console(file=messages))
    if capture.argv[0] == "history":
        _history_of_saved_runs(ROOT / capture.argv[1], *capture.argv[2:], consoles=consoles)
    else:
        show(ROOT / capture.argv[1], False, consoles)
    shown = screen.getvalue()
    lines = [line.rstrip() for line in shown.splitlines()]
    if capture.start_at:
        starts = [i for i, line in enumerate(lines) if line.startswith(capture.start_at)]
        lines = lines[starts[0] if starts else 0 :]
    if capture.after:
        ends = [i for i, line in enumerate(lines) if line.startswith(capture.after)]
        lines = lines[ends[0] + 1 if ends else 0 :]
    if capture.stop_at:
        stops = [i for i, line in enumerate(lines) if i and line.startswith(capture.stop_at)]
        lines = lines[: stops[0] if stops else len(lines)]
    return "```text\n" + "\n".join(lines).strip() + "\n```"


def _history_of_saved_runs(
    folder: Path, project: str, control: str | None = None, *, consoles: Any
) -> None:
    """`grpcbench history` of ``project`` (against ``control``) on a store made afresh
    from their saved runs, interleaved as they were made."""
    import tempfile

    from grpcbench.cli.store_commands import HistoryArgs, history
    from grpcbench.history.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/runs.db"
        store = Store(url)
        for name in filter(None, (project, control)):
            for path in sorted(folder.glob(f"{name}-*.json")):
                store.save(name, json.loads(path.read_text()), path.name)
        store.engine.dispose()
        history(HistoryArgs(url, project, last=20, control=control), consoles)


# Blocks that render another block's saved results their own way.
SOURCES = {"capacity-summary": "capacity", "profile-hello-top": "profile-hello"}

BLOCK = re.compile(r"<!-- results:([\w-]+) -->\n.*?<!-- /results:\1 -->", re.DOTALL)


def rendered(text: str) -> str:
    """``text`` with every results block regenerated from its saved results."""

    def block(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in CODE_RENDERERS:  # from the code, not from saved results
            return f"<!-- results:{name} -->\n{CODE_RENDERERS[name]()}\n<!-- /results:{name} -->"
        if name in CAPTURES:
            body = render_capture(CAPTURES[name])
            return f"<!-- results:{name} -->\n{body}\n<!-- /results:{name} -->"
        path = RESULTS / f"{SOURCES.get(name, name)}.json"
        record = json.loads(path.read_text())
        if name in RUN_RENDERERS:
            body = RUN_RENDERERS[name](path)
        elif record.get("tool") == "grpcbench":
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
