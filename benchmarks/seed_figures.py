"""The seeds' figures in the docs, measured again (``nox -s figures``).

Runs each seed's commands - the very ``grpcbench run`` lines its docs page
shows - in interleaved rounds, and saves what each run measured to
``docs/results/seed-NNN.json``; ``scripts/render_results.py`` then rewrites
the pages' tables from those files, with the machine, versions and date, so a
stale figure cannot survive. ``--seeds 001`` runs one seed; ``--rounds`` sets
the rounds (medians are reported).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# benchmarks/, this script's directory
from clients import save_record, start_go_greeter

from grpcbench.model.placement import default_placement
from grpcbench.model.results import LevelResult, now_iso
from grpcbench.model.results_file import load_run
from grpcbench.targets.external import ExternalTarget

ROOT = Path(__file__).resolve().parents[1]

# Where a command says {greeter} and {greeter_pid}: the Go greeter (benchmarks/greeter_go),
# started by this script on the server's CPUs.
GREETER = "{greeter} --target-pid {greeter_pid}"
# Seed 001: connection strategies against a trivial handler (the seed's server was Go:
# the Go greeter; and grpc.aio) and one that sleeps 0.5 s.
# A group so labelled runs its command beside this many CPU hogs (python spinning).
HOGS = 4
BESIDE_HOGS = f", beside {HOGS} CPU hogs"
SEED_001 = {
    (server, strategy): f"grpcbench run {how} -c 100 --connections {strategy}"
    " --duration 5s --warmup 1s"
    for server, how in (
        ("Go greeter, trivial", f"--target {GREETER}"),
        ("grpcio-aio, trivial", "-s grpcio-aio"),
        # The same beside CPU hogs: whether a saturated server's replies come one by one
        # (the pool keeps its connections) depends on the CPU it gets.
        (f"grpcio-aio, trivial{BESIDE_HOGS}", "-s grpcio-aio"),
        ("grpcio-aio, sleeps 0.5 s", "-s grpcio-aio --server-param delay_ms=500"),
    )
    for strategy in ("shared", "checkout:10", "per-request")
}
# Seed 004: CPU and peak RSS of 100 watches of the medium folder in one message.
SEED_004 = {
    ("100 watches", "medium"): 'grpcbench run --scenario watch -s "grpcio:workers=10 grpclib'
    ' grpcio-aio" -c 100 --variants mono-medium-objects,mono-medium-serialized'
}
# Seed 003: C clients, each with its own connection and one call in flight, 581-byte requests.
SEED_003 = {
    ("clients", "per-user"): 'grpcbench run -s "grpcio:workers=10 grpcio-aio" -c 1,10,15,20'
    " --connections per-user --workload-param size=581 -n 10000"
}
# Seed 004 at the seed's scale: 500 streams at once from 25 client processes (its 25
# pods x 20 streams), then 5 s with no load, for the memory each kind still holds.
SEED_004_500 = {
    ("500 watches", "burst"): "grpcbench run --scenario watch -c 500 -n 500 --warmup 20"
    " --client-processes 25 --cooldown 5s --variants mono-small-objects,"
    "mono-small-serialized,mono-small-frame,mono-small-two-writes,mono-medium-objects,"
    "mono-medium-serialized,mono-medium-frame,mono-medium-two-writes"
}
# Seed 004 for minutes, as the seed watched it: 500 streams kept busy for a minute (each
# stream that ends is opened again), then 10 s with no load.
SEED_004_MINUTE = {
    ("500 watches for a minute", "minute"): "grpcbench run --scenario watch -c 500"
    " --duration 60s --warmup 0 --client-processes 25 --cooldown 10s"
    " --variants mono-medium-objects,mono-medium-serialized",
}
# Seed 002: listing 893 objects from an S3 500 ms away, concurrency 10 (the seed's kinds,
# and grpc.aio).
SEED_002 = {
    ("S3 500 ms away", "c10"): 'grpcbench run --scenario s3-list -s "grpcio:workers=1'
    ' grpcio:workers=10 grpclib grpclib+uvloop grpcio-aio" --io-delay-ms 500 -c 10 -n 40'
}
# Seed 000: fetching all 17,613 matches of '%ff%' among 110,000 users, paginated or
# streamed with 1, 10 or 100 page queries in flight; the database on one CPU of its own
# (the generator's), on both CPUs, and SQLite inside the server. The client's memory per
# fetch-all from an untimed traced pass (the seed's B/op and allocs/op).
PAGINATE = 'grpcbench run --scenario paginate-vs-stream -s "grpcio:workers=10 grpclib grpcio-aio"'
SEED_000 = {
    ("PostgreSQL on CPU 1", "18K"): f"{PAGINATE} -n 10 --client-allocations 3",
    ("PostgreSQL on CPUs 0-1", "18K"): f"{PAGINATE} -n 10 --backing-cpus 0-1",
    ("SQLite in the server", "18K"): f"{PAGINATE} -n 10 --database sqlite",
}
# Seed 000's large case: 1,039,798 matches of '%e%' among 1,355,000 users, one fetch-all
# per variant (the seed, too, ran it once).
SEED_000_LARGE = {
    ("PostgreSQL on CPUs 0-1", "1.04M"): "grpcbench run --scenario paginate-vs-stream"
    " -s grpcio-aio --server-param users=1355000 --workload-param keyword=e -c 1 -n 1"
    " --warmup 0 --timeout 900s --backing-cpus 0-1",
}
SEEDS: dict[str, dict[tuple[str, str], str]] = {
    "000": SEED_000,
    "000-large": SEED_000_LARGE,
    "001": SEED_001,
    "002": SEED_002,
    "003": SEED_003,
    "004": SEED_004,
    "004-500": SEED_004_500,
    "004-minute": SEED_004_MINUTE,
}


def level_figures(level: LevelResult) -> dict[str, Any]:
    """What the seed pages show of one measured level."""
    load, usage = level.measured, level.server_usage
    connects = load.connect_latency.count if load.connect_latency else 0
    return {
        "server": level.server,
        "variant": level.variant,
        "concurrency": level.concurrency,
        "calls": load.count,
        "ok": load.ok,
        "rps": load.rps,
        "p50_us": load.latency.percentile_us(50),
        "mean_us": load.latency.mean_us,
        "p99_us": load.latency.percentile_us(99),
        "connects": connects,
        "server_cpu_s": usage.cpu_s if usage else None,
        "server_peak_rss_bytes": usage.peak_rss_bytes if usage else None,
        "wall_s": load.wall_s,
        "server_rss_after_cooldown_bytes": usage.rss_after_cooldown_bytes if usage else None,
        "cooldown_s": usage.cooldown_s if usage else 0.0,
        "verdict": level.verdict,
        "items": load.stream.items if load.stream else None,
        "backing_cpu_s": {name: u.cpu_s for name, u in level.backing_usage.items()},
        "backing_cores": {name: u.cpu_cores for name, u in level.backing_usage.items()},
        "client_allocations": (
            level.client_allocations.to_json() if level.client_allocations else None
        ),
    }


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[None]:
    """``count`` processes spinning on any CPU while the block runs, then killed."""
    hogs = [
        subprocess.Popen([sys.executable, "-P", "-c", "while True: pass"]) for _ in range(count)
    ]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


async def run_command(
    command: str, workdir: Path, greeter: ExternalTarget | None
) -> list[dict[str, Any]]:
    """One seed command as a user types it (plus an output file): every level's figures."""
    if greeter is not None:
        command = command.format(greeter=greeter.address, greeter_pid=greeter.pid)
    output = workdir / "run.json"
    argv = [*shlex.split(command)[1:], "--output", str(output), "--sample-interval", "off"]
    process = await asyncio.create_subprocess_exec(sys.executable, "-P", "-m", "grpcbench", *argv)
    if await process.wait() != 0:
        sys.exit(f"{command} exited {process.returncode}")
    return [level_figures(level) for level in load_run(output).levels]


async def measure(seed: str, args: argparse.Namespace) -> None:
    commands = SEEDS[seed]
    needs_greeter = any("{greeter}" in command for command in commands.values())
    if needs_greeter and not args.greeter:
        sys.exit(f"seed {seed} needs --greeter PATH (nox -s figures builds it)")
    child, greeter = (
        await start_go_greeter(args.greeter, default_placement().server_cpus)
        if needs_greeter
        else (None, None)
    )
    runs: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory() as workdir:
            for round_number in range(1, args.rounds + 1):  # interleaved: drift hits all
                for (group, label), command in commands.items():
                    print(f"seed {seed} round {round_number}: {command}", flush=True)
                    hogs = HOGS if group.endswith(BESIDE_HOGS) else 0
                    with cpu_hogs(hogs):
                        measured = await run_command(command, Path(workdir), greeter)
                    for figures in measured:
                        runs.append({"group": group, "label": label, "round": round_number,
                                     "command": command, **figures})  # fmt: skip
    finally:
        if child is not None:
            await child.stop()
    if args.save:
        shown = [
            c.format(greeter="127.0.0.1:50051", greeter_pid="$GREETER_PID")
            + (f"    # beside {HOGS} CPU hogs" if group.endswith(BESIDE_HOGS) else "")
            for (group, _), c in commands.items()
        ]
        save_record(
            str(ROOT / "docs" / "results" / f"seed-{seed}.json"), f"seed-{seed}",
            date=now_iso(), rounds=args.rounds, commands=shown, runs=runs,
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", default=",".join(SEEDS), help="e.g. 001,004")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--greeter", default=os.environ.get("GRPCBENCH_GO_GREETER", ""),
                        help="the Go greeter binary (nox -s figures builds it)")  # fmt: skip
    parser.add_argument("--save", action="store_true", help="write docs/results/seed-NNN.json")
    args = parser.parse_args()
    for seed in args.seeds.split(","):
        asyncio.run(measure(seed, args))


if __name__ == "__main__":
    main()
