"""Streaming RPCs against grpc-go's route_guide: built-in (both client stacks) vs ghz.

``nox -s streaming`` builds grpc-go's route_guide server from
``google.golang.org/grpc/examples`` in the session (never at install) and
passes its binary and proto here. For each method (ListFeatures: a server
stream of 100 features; RecordRoute: a client stream of 10 points; RouteChat:
bidi, two notes per call at a location unique to the call) every client runs
the same ``grpcbench run --target ... --call ...`` command in turn, rounds
interleaved, each run against a fresh server pinned to CPU 0 (RouteChat keeps
every note it is sent), the client on CPU 1. On the server stream
(ListFeatures), benchmarks/python_floor.py runs too: the pure-Python floor,
HTTP/2 frames counted with none of gRPC's rules, what a reply message costs
CPython itself. Prints every run, the medians (req/s, client CPU per call and
per message) and the ratios built-in / ghz and built-in / floor.
Numbers to track, not assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from clients import PYTHON_FLOOR, save_record  # benchmarks/, this script's directory

from grpcbench.base.processes import start_child
from grpcbench.rpc.call import CallMessages, MethodCall
from grpcbench.rpc.schema import MethodSchema, compile_proto
from grpcbench.stats.histogram import LatencySummary

POINTS = [{"latitude": 407838351 + i * 1000, "longitude": -746143763 + i * 1000} for i in range(10)]
METHODS = {
    "ListFeatures": {
        "lo": {"latitude": 400000000, "longitude": -750000000},
        "hi": {"latitude": 420000000, "longitude": -730000000},
    },
    "RecordRoute": POINTS,
    "RouteChat": [
        {"location": {"latitude": "{{.RequestNumber}}", "longitude": 1}, "message": "a"},
        {"location": {"latitude": "{{.RequestNumber}}", "longitude": 1}, "message": "b"},
    ],
}
CLIENTS = {
    "builtin": ["--load", "builtin"],
    "builtin@grpcio": ["--load", "builtin", "--client-stack", "grpcio"],
    "ghz": ["--load", "ghz"],
}


async def fresh_server(binary: str) -> tuple[object, int, int]:
    child = await start_child([binary, "-port=0"], (0,))
    assert child.process.stdout is not None
    # route_guide logs its address on stderr; find the port it listens on.
    import psutil

    for _ in range(100):
        connections = [
            c for c in psutil.Process(child.pid).net_connections() if c.status == "LISTEN"
        ]
        if connections:
            return child, connections[0].laddr.port, child.pid
        await asyncio.sleep(0.05)
    await child.stop()
    raise SystemExit("route_guide did not listen")


FLOOR_METHODS = ("ListFeatures",)  # python_floor.py calls unary methods and server streams
WARMUP_CALLS = 500  # grpcbench run's default warm-up (--warmup)


async def floor_run(args: argparse.Namespace, method: str) -> dict:
    """python_floor.py on ``method``, pinned as the other clients, measured alike (its
    CPU over the measured calls, from its own process)."""
    schema = MethodSchema(f"routeguide.RouteGuide/{method}", compile_proto(args.proto))
    call = MethodCall.build(schema, json.dumps(METHODS[method]), "{}")
    fixed = CallMessages(call).fixed_messages
    assert fixed is not None and len(fixed) == 1
    child, port, _ = await fresh_server(args.route_guide)
    try:
        argv = [
            "taskset", "-c", "1", sys.executable, "-P", str(PYTHON_FLOOR), f"127.0.0.1:{port}",
            "--path", f"/routeguide.RouteGuide/{method}", "--request-hex", fixed[0].hex(),
            f"--concurrency={args.concurrency}", f"--requests={args.requests}",
            f"--warmup={WARMUP_CALLS}",
        ]  # fmt: skip
        done = await asyncio.to_thread(subprocess.run, argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"floor on {method} failed: {done.stderr[-600:]}")
        result = json.loads(done.stdout.splitlines()[-1])
    finally:
        await child.stop()  # type: ignore[attr-defined]
    calls, messages = result["calls"], result["messages"]
    return {
        "rps": result["rps"], "ok": True, "cpu_per_call": result["cpu_us_per_call"],
        "cpu_per_message": result["cpu_s"] / messages * 1e6,
        "messages_per_call": messages / calls, "verdict": "-",
    }  # fmt: skip


async def one_run(args: argparse.Namespace, method: str, client: str, out: Path) -> dict:
    if client == "floor":
        return await floor_run(args, method)
    child, port, pid = await fresh_server(args.route_guide)
    try:
        argv = [
            sys.executable, "-P", "-m", "grpcbench", "run",
            "--target", f"127.0.0.1:{port}", "--target-pid", str(pid),
            "--call", f"routeguide.RouteGuide/{method}", "--proto", args.proto,
            "-d", json.dumps(METHODS[method]), "--concurrency", str(args.concurrency),
            "--requests", str(args.requests), "--client-cpus", "1",
            "--output", str(out), *CLIENTS[client],
        ]  # fmt: skip
        done = await asyncio.to_thread(subprocess.run, argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{client} on {method} failed: {done.stderr[-600:]}")
        level = json.loads(out.read_text())["levels"][0]
    finally:
        await child.stop()  # type: ignore[attr-defined]
    load = level["load"]
    calls = sum(load["statuses"].values())
    messages = (load.get("stream") or {}).get("messages", 0)
    if messages == calls:  # one reply per call (a client stream): no reply stream to cost
        messages = 0
    return {
        "rps": calls / load["wall_s"],
        "ok": load["statuses"].get("OK", 0) == calls,
        "cpu_per_call": load["client_cpu_s"] / calls * 1e6,
        "cpu_per_message": load["client_cpu_s"] / messages * 1e6 if messages else None,
        "messages_per_call": messages / calls if messages else None,
        "verdict": level["verdict"],
        **per_message(load.get("stream") or {}),
    }


def per_message(stream: dict) -> dict:
    """The stream's own histograms (the built-in generator's; ghz times whole calls):
    time to the first reply message, and the gap from each to the next, in us."""
    figures = {}
    for name, key in (("first_message", "first_message"), ("gap", "gap")):
        if stream.get(key):
            summary = LatencySummary.from_json(stream[key])
            figures[f"{name}_p50_us"] = summary.percentile_us(50)
            figures[f"{name}_p99_us"] = summary.percentile_us(99)
    return figures


async def bench(args: argparse.Namespace) -> None:
    clients = [c for c in CLIENTS if c != "ghz" or shutil.which("ghz")]
    print(f"route_guide on CPU 0, clients on CPU 1; concurrency {args.concurrency},"
          f" {args.requests} calls per run, {args.repeat} rounds\n")  # fmt: skip
    samples: dict[tuple[str, str], list[dict]] = {}
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        for round_number in range(1, args.repeat + 1):
            for method in args.methods:
                for client in clients + (["floor"] if method in FLOOR_METHODS else []):
                    result = await one_run(args, method, client, Path(folder) / "run.json")
                    samples.setdefault((method, client), []).append(result)
                    runs.append({"round": round_number, "method": method, "client": client,
                                 **result})  # fmt: skip
                    per_message = result["cpu_per_message"]
                    print(
                        f"{round_number:>3} {method:>12} {client:>15} {result['rps']:>8.0f} req/s"
                        f" {result['cpu_per_call']:>7.1f} us/call"
                        + (f" {per_message:>5.2f} us/message" if per_message else "")
                        + f"  {result['verdict']}" + ("" if result["ok"] else "  NOT ALL OK")
                    )  # fmt: skip
    print("\n| method | client | req/s | client CPU us/call | us/message | messages/call"
          " | first message p50 us | gap p50 us | gap p99 us |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    medians: dict[tuple[str, str], float] = {}
    for (method, client), group in samples.items():
        rps = statistics.median(r["rps"] for r in group)
        cost = statistics.median(r["cpu_per_call"] for r in group)
        per_message = [r["cpu_per_message"] for r in group if r["cpu_per_message"]]
        per_call = [r["messages_per_call"] for r in group if r["messages_per_call"]]
        medians[(method, client)] = rps
        print(
            f"| {method} | {client} | {rps:,.0f} | {cost:.1f} |"
            f" {statistics.median(per_message) if per_message else 0:.2f} |"
            f" {statistics.median(per_call) if per_call else 0:.1f} |"
            + "".join(f" {_median_of(group, key)} |" for key in TIMINGS)
        )
    print()
    for method in args.methods:
        for a, b in (("builtin", "ghz"), ("builtin", "builtin@grpcio")):
            if (method, a) in medians and (method, b) in medians:
                ratio = medians[(method, a)] / medians[(method, b)]
                print(f"{method}: {a} / {b} req/s {ratio:.2f}x")
        if (method, "floor") in samples and (method, "builtin") in samples:
            cost = [
                statistics.median(r["cpu_per_message"] for r in samples[(method, client)])
                for client in ("builtin", "floor")
            ]
            print(f"{method}: builtin / floor CPU per message {cost[0] / cost[1]:.2f}x")
    if args.save:
        save_results(args, runs)


TIMINGS = ("first_message_p50_us", "gap_p50_us", "gap_p99_us")


def _median_of(group: list[dict], key: str) -> str:
    values = [r[key] for r in group if r.get(key) is not None]
    return f"{statistics.median(values):,.0f}" if values else "-"


def save_results(args: argparse.Namespace, runs: list[dict]) -> None:
    """Every run, for scripts/render_results.py (the docs' tables)."""
    save_record(
        args.save, "streaming", concurrency=args.concurrency, requests=args.requests,
        rounds=args.repeat, runs=runs,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--route-guide", required=True, help="grpc-go's route_guide server binary")
    parser.add_argument("--proto", required=True, help="its route_guide.proto")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--methods", type=lambda t: t.split(","), default=list(METHODS))
    parser.add_argument("--save", help="write every run as JSON (scripts/render_results.py)")
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
