"""How expensive is each load generator? (``nox -s loadgen``)

One fixed server, pinned to its own CPU, driven at one concurrency by each
client in turn, interleaved over several rounds so drift hits all alike:
- ``bare``: benchmarks/bare_loop.py, forty lines of grpc.aio and nothing of
  grpcbench (the floor of a Python gRPC client);
- ``floor``: benchmarks/python_floor.py, HTTP/2 frames in Python with what a
  benchmark's call needs and none of gRPC's rules (the floor of a pure-Python client);
- ``builtin`` (1 process) and ``builtin:2`` (2 processes): grpcbench's driver on
  its default client stack (wire: its own HTTP/2 frames); ``builtin@grpcio`` the
  same driver on grpc.aio (``--client-stack grpcio``);
- ``ghz``: the Go tool, when installed, tuned as its users run it
  (``--disable-template-functions --cpus N``, as grpcbench's ghz driver runs it);
- ``h2load``: nghttp2's load tool (Debian ``nghttp2-client``), the gRPC request
  sent as a raw HTTP/2 body on one connection: the floor of client cost per call.

The default server is a minimal Go greeter (benchmarks/greeter_go, built by the
nox session, never at install): its cost per call is far below a Python
client's, so the client is the limit and the benchmark measures the clients.
``--server grpcio-aio`` (any grpcbench spec) benchmarks against a Python server.

Prints every run and the medians: the rate, the client's CPU microseconds per
call, the verdict on who limited it (grpcbench.model.verdict, from the server's and
the client's measured CPU), and the ratios built-in / bare and built-in / ghz,
side by side in one run; then each client's instructions per call under
callgrind (benchmarks/instructions.py: h2load, the floor and the built-in
generator), a figure load on the machine cannot move. ``--rss-calls
1000000,10000000`` also runs the built-in driver for that many calls and prints
its generator's peak RSS.
Numbers to track, not assertions: machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

# benchmarks/, this script's directory
from clients import make_generators, save_record, start_go_greeter
from instructions import MANY_CONNECTIONS, instructions_table

from grpcbench.load.catalogue import make_driver
from grpcbench.load.driver import DriverSettings, LoadDriver
from grpcbench.model.placement import default_placement
from grpcbench.run.level_options import level_context
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.targets.external import ExternalTarget


@dataclass
class Samples:
    rps: list[float] = field(default_factory=list)
    cpu_us_per_call: list[float] = field(default_factory=list)

    @property
    def medians(self) -> tuple[float, float]:
        return statistics.median(self.rps), statistics.median(self.cpu_us_per_call)


async def bench(args: argparse.Namespace) -> None:
    placement = default_placement()  # the same placement as `grpcbench run`
    server_cpus, client_cpus = placement.server_cpus, placement.client_cpus
    drivers = make_generators(args.generators)
    stop: Callable[[], Awaitable[object]]
    if args.server == "go":
        child, target = await start_go_greeter(args.greeter, server_cpus)
        stop = child.stop
    else:
        server = await start_server(parse_server_spec(args.server), "hello", {}, cpus=server_cpus)
        target = ExternalTarget(args.server, server.address, server.pid)
        stop = server.stop
    print(f"server {target.label} on CPUs {list(server_cpus)}; clients on {list(client_cpus)};"
          f" {os.cpu_count()} CPUs, {_cpu_model()}")  # fmt: skip
    print(f"concurrency {args.concurrency}, {args.requests} calls per run, {args.repeat} rounds\n")
    print(f"{'round':>5} {'client':>16} {'req/s':>9} {'CPU us/call':>12}  verdict")
    samples = {label: Samples() for label in drivers}
    runs: list[dict[str, object]] = []
    contexts = {
        stack: level_context(
            target.address, concurrency=args.concurrency, requests=args.requests,
            warmup=args.requests // 10, client_stack=stack, client_cpus=client_cpus,
        )
        for stack in {stack for _, stack in drivers.values()}
    }  # fmt: skip
    try:
        for round_number in range(1, args.repeat + 1):
            for label, (driver, stack) in drivers.items():
                context = contexts[stack]
                level = await context.measure_level(driver, target, context.options.levels[0])
                cost = level.generator_cpu_us_per_call or 0.0
                samples[label].rps.append(level.measured.rps)
                samples[label].cpu_us_per_call.append(cost)
                runs.append({
                    "round": round_number, "client": label, "rps": level.measured.rps,
                    "cpu_us_per_call": cost, "verdict": level.verdict,
                    "statuses": dict(level.measured.statuses),
                    "p50_us": level.measured.latency.percentile_us(50),
                })  # fmt: skip
                if level.measured.count != level.measured.statuses.get("OK", 0):
                    print(f"      {label}: not every call OK: {dict(level.measured.statuses)}")
                print(f"{round_number:>5} {label:>16} {level.measured.rps:>9.0f} {cost:>12.1f}"
                      f"  {level.verdict}")  # fmt: skip
        print()
        print("| client | req/s (median) | client CPU us per call (median) |")
        print("|---|---|---|")
        for label, sample in samples.items():
            rate, cost = sample.medians
            print(f"| {label} | {rate:,.0f} | {cost:.1f} |")
        print()
        for a, b in RATIOS:
            if a in samples and b in samples:
                rate = samples[a].medians[0] / samples[b].medians[0]
                cost = samples[a].medians[1] / samples[b].medians[1]
                print(f"{a} / {b}: rate {rate:.2f}x, CPU per call {cost:.2f}x")
        print("(a server-bound run's rate is the server's, not the client's maximum)")
        open_loop = await open_loop_runs(args, drivers, target, client_cpus)
        instructions: dict[str, float] = {}
        if args.instructions and shutil.which("valgrind"):
            print("\ninstructions per call (callgrind: 12,000 calls less 2,000, c=50):")
            instructions = await asyncio.to_thread(
                instructions_table,
                target.address,
                ["h2load", "floor", "builtin", MANY_CONNECTIONS],
                2000,
                12000,
            )
        elif args.instructions:
            print("\ninstructions per call: valgrind is not installed (Debian valgrind); skipped")
        if args.save:
            save_results(args, target.label, runs, open_loop, instructions)
        for calls in args.rss_calls:
            await rss_after(calls, target, args, client_cpus)
    finally:
        await stop()


async def rss_after(
    calls: int, target: ExternalTarget, args: argparse.Namespace, client_cpus: tuple[int, ...]
) -> None:
    """The built-in generator's memory after ``calls`` calls: it must stay flat."""
    driver = make_driver("builtin", DriverSettings(client_processes=1))
    context = level_context(
        target.address, concurrency=args.concurrency, requests=calls,
        warmup=args.requests // 10, client_cpus=client_cpus, max_level="3600s",
    )  # fmt: skip
    level = await context.measure_level(driver, target, context.options.levels[0])
    load = level.measured
    start, peak = load.client_rss_start_bytes / 2**20, load.client_peak_rss_bytes / 2**20
    print(
        f"built-in generator after {load.count:,} calls ({load.rps:,.0f} req/s): RSS"
        f" {start:.1f} MiB when measuring began, peak {peak:.1f} MiB (+{peak - start:.1f} MiB)"
    )


# Side-by-side ratios printed when both clients ran (the wire-speed goals among them:
# builtin / h2load CPU <= 1.5x and rate >= 0.9x; builtin / ghz CPU <= 0.4x).
RATIOS = (
    ("builtin", "h2load"), ("builtin", "ghz"), ("builtin", "builtin@grpcio"),
    ("builtin@grpcio", "bare"), ("builtin:2", "builtin"), ("bare", "ghz"),
    ("builtin", "floor"), ("floor", "h2load"),
)  # fmt: skip


async def open_loop_runs(
    args: argparse.Namespace,
    drivers: dict[str, tuple[LoadDriver, str]],
    target: ExternalTarget,
    client_cpus: tuple[int, ...],
) -> list[dict[str, object]]:
    """The built-in driver's open loop at each ``--rates`` rate, on each client stack:
    whether it keeps its pacer (send lag) and what latency it then records."""
    results: list[dict[str, object]] = []
    builtins = {label: pair for label, pair in drivers.items() if label.startswith("builtin")}
    for rate in args.rates:
        for round_number in range(1, args.repeat + 1):
            for label, (driver, stack) in builtins.items():
                if ":" in label.split("@")[0]:
                    continue  # one process: the pacer of one generator
                context = level_context(
                    target.address, rate=rate, requests=int(rate * 3),
                    warmup=args.requests // 10, client_stack=stack, client_cpus=client_cpus,
                )  # fmt: skip
                level = await context.measure_level(driver, target, context.options.levels[0])
                load = level.measured
                lag = load.schedule_lag
                row = {
                    "rate": rate, "round": round_number, "client": label, "rps": load.rps,
                    "lag_p99_us": lag.percentile_us(99) if lag else None,
                    "lag_max_us": lag.max_us if lag else None,
                    "p99_us": load.latency.percentile_us(99),
                    "cpu_us_per_call": level.generator_cpu_us_per_call or 0.0,
                    "statuses": dict(load.statuses),
                }  # fmt: skip
                results.append(row)
                print(f"  rate {rate:g}/s {label:>16}: {load.rps:,.0f} req/s, send lag p99"
                      f" {(row['lag_p99_us'] or 0) / 1000:.2f} ms, latency p99"
                      f" {load.latency.percentile_us(99) / 1000:.2f} ms")  # fmt: skip
    return results


def save_results(
    args: argparse.Namespace,
    server: str,
    runs: list[dict[str, object]],
    open_loop: list[dict[str, object]],
    instructions: dict[str, float],
) -> None:
    """Every run of this invocation, for scripts/render_results.py (the README's tables)."""
    save_record(
        args.save, "loadgen", server=server, concurrency=args.concurrency,
        requests=args.requests, rounds=args.repeat, runs=runs, open_loop=open_loop,
        instructions=instructions,
    )  # fmt: skip


def _cpu_model() -> str:
    from grpcbench.model.metadata import cpu_model

    return cpu_model()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--server", default="go", help="go (the Go greeter) or a server spec")
    parser.add_argument("--greeter", default=os.environ.get("GRPCBENCH_GO_GREETER", ""),
                        help="the Go greeter binary (nox -s loadgen builds it)")  # fmt: skip
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--generators",
        default="bare,floor,builtin,builtin@grpcio,builtin:2"
        + (",ghz" if shutil.which("ghz") else "")
        + (",h2load" if shutil.which("h2load") else ""),
        help="bare, floor, h2load, DRIVER[:PROCESSES][@STACK], ... to compare",
    )
    parser.add_argument(
        "--rss-calls",
        type=lambda text: [int(n) for n in text.split(",") if n],
        default=[],
        help="also: the built-in generator's peak RSS after N calls (e.g. 1000000,10000000)",
    )
    parser.add_argument(
        "--rates",
        type=lambda text: [float(n) for n in text.split(",") if n],
        default=[20000.0],
        help="also: the built-in open loop at these rates (3 s each), per client stack",
    )
    parser.add_argument(
        "--no-instructions", dest="instructions", action="store_false",
        help="skip instructions per call under callgrind (h2load, floor, builtin; ~1 min)",
    )  # fmt: skip
    parser.add_argument("--save", help="write every run as JSON (scripts/render_results.py)")
    args = parser.parse_args()
    if args.server == "go" and not args.greeter:
        parser.error("--server go needs --greeter PATH (nox -s loadgen builds it)")
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
