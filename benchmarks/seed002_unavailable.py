"""Seed 002's Unavailable errors on grpclib's streaming servers, counted per client.

The seed's async servers (grpclib in 2020) failed 46-83% of its streaming S3
calls with Unavailable, its sync grpcio servers none. The cause, found with
this script and grpclib's debug log: a client may send a WINDOW_UPDATE for a
stream the server has already finished and forgotten; h2 3.x raises
StreamClosedError for it, grpclib takes any h2 ProtocolError as fatal and
closes the connection, and every call still open on it fails ("transport is
closing", "connection reset by peer"). h2 4 ignores such frames, so today's
stack never shows it, while today's grpclib on h2 3.2 does. The clients that top
up a stream's window as they read (grpc.aio, grpc-go's ghz) send such frames; how
often a call meets a closed connection depends on timing (more streams in flight,
more calls on a dying connection). The built-in client's own transport tops up a
stream only after a quarter of its 8 MiB window is used, which these replies
never reach: it is here to show that.

``nox -s seed002`` runs this once per library stack (today's, today's grpclib
on the seed's h2, the seed's) so the counts sit side by side. Each cell is a
fresh server (a closed connection must not leak into the next cell), the
embedded S3 with the seed's 893 objects, and N calls of StreamObjects.
``--save FILE`` writes the cells for scripts/render_results.py (the seed-002 page's
table); ``--append`` adds this stack's to those already there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from clients import save_record  # benchmarks/, this script's directory

from grpcbench.base.processes import start_child
from grpcbench.base.resources import protos_dir
from grpcbench.load.catalogue import make_driver
from grpcbench.load.driver import DriverSettings
from grpcbench.model.placement import default_placement
from grpcbench.model.results import now_iso
from grpcbench.run.level_options import level_context
from grpcbench.servers.launcher import RunningServer, start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.services.objects import prepare
from grpcbench.targets.started import StartedServer

METHOD = "objects.ObjectStore/StreamObjects"
GHZ_TIME_LIMIT_S = 600.0


# The built-in client on each of its stacks: its own HTTP/2 transport (the default) and
# grpc.aio (C-core's, which tops up each stream's window as it reads, as grpc-go does).
BUILTIN_STACKS = {"builtin": "wire", "builtin-grpcio": "grpcio"}


async def _builtin(
    server: RunningServer, concurrency: int, requests: int, stack: str
) -> Counter[str]:
    context = level_context(
        server.address, scenario="s3-stream", concurrency=concurrency, requests=requests,
        warmup=0, workload_params={"mode": "stream"}, client_stack=stack,
    )  # fmt: skip
    driver = make_driver("builtin", DriverSettings(client_processes=1))
    level = await context.measure_level(driver, StartedServer(server), context.options.levels[0])
    return Counter(level.measured.statuses)


async def _ghz(binary: str, server: RunningServer, concurrency: int, requests: int) -> Counter[str]:
    """One plain ghz run (no grpcbench driver: ghz of 2020 lacks options it passes)."""
    argv = [
        binary, "--insecure", "-i", str(protos_dir()),
        "--proto", "grpcbench/proto/objects.proto", "--call", METHOD, "-d", "{}",
        "-c", str(concurrency), "-n", str(requests), "-O", "json", server.address,
    ]  # fmt: skip
    child = await start_child(argv, default_placement().client_cpus)
    try:
        stdout, _ = await asyncio.wait_for(child.process.communicate(), GHZ_TIME_LIMIT_S)
    finally:
        await child.stop()
    if child.process.returncode != 0:
        raise SystemExit(f"{binary} exited with {child.process.returncode}: {child.stderr_tail()}")
    report: dict[str, Any] = json.loads(stdout)
    statuses: Counter[str] = Counter(report.get("statusCodeDistribution") or {})
    for message in report.get("errorDistribution") or {}:
        print(f"    {binary}: {message}")
    return statuses


def _stack() -> str:
    return ", ".join(f"{name} {importlib.metadata.version(name)}" for name in ("grpclib", "h2"))


async def main(args: argparse.Namespace) -> None:
    binaries = dict(entry.split("=", 1) for entry in args.ghz)
    clients = [*BUILTIN_STACKS, *binaries]
    print(f"stack: {_stack()}; {args.requests} StreamObjects calls per cell (893 messages each)")
    print(f"{'server':<16} {'client':<14} {'c':>3} {'OK':>5} {'Unavailable':>12} {'other':>6}")
    cells: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        params = prepare({}, workdir, stack)  # the embedded S3, seeded
        for spec in args.servers:
            for concurrency in args.concurrency:
                for client in clients:
                    server = await start_server(
                        parse_server_spec(spec), "objects", params,
                        cpus=default_placement().server_cpus,
                    )  # fmt: skip
                    try:
                        if client in BUILTIN_STACKS:
                            statuses = await _builtin(
                                server, concurrency, args.requests, BUILTIN_STACKS[client]
                            )
                        else:
                            statuses = await _ghz(
                                binaries[client], server, concurrency, args.requests
                            )
                    finally:
                        await server.stop()
                    other = sum(statuses.values()) - statuses["OK"] - statuses["Unavailable"]
                    print(
                        f"{spec:<16} {client:<14} {concurrency:>3} {statuses['OK']:>5}"
                        f" {statuses['Unavailable']:>12} {other:>6}",
                        flush=True,
                    )
                    cells.append({
                        "stack": _stack(), "server": spec, "client": client,
                        "concurrency": concurrency, "ok": statuses["OK"],
                        "unavailable": statuses["Unavailable"], "other": other,
                    })  # fmt: skip
    if args.save:
        earlier = json.loads(Path(args.save).read_text())["cells"] if args.append else []
        save_record(args.save, "seed-002-unavailable", date=now_iso(), requests=args.requests,
                    cells=earlier + cells)  # fmt: skip


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--servers", type=_names, default=["grpclib+uvloop", "grpclib"])
    parser.add_argument("--concurrency", type=_numbers, default=[2, 10])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument(
        "--ghz", action="append", default=[], metavar="LABEL=PATH",
        help="a ghz binary to run beside the built-in client (repeatable)",
    )  # fmt: skip
    parser.add_argument("--save", help="write the cells as JSON (docs/results/...)")
    parser.add_argument("--append", action="store_true", help="add to --save's cells")
    args = parser.parse_args()
    if args.append and not (args.save and Path(args.save).exists()):
        sys.exit("--append needs an existing --save file")
    return args


def _names(text: str) -> list[str]:
    return text.split(",")


def _numbers(text: str) -> list[int]:
    return [int(item) for item in text.split(",")]


if __name__ == "__main__":
    asyncio.run(main(_parse()))
