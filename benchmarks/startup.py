"""Start-up, side by side (``nox -s startup``): what a user waits for before any call.

A ghz user feels a tool's start-up on every run: the same 200-call line (ghz's
default -n, -c 50) against the Go greeter (benchmarks/greeter_go, built by the
session), given to ghz and, with the binary's name swapped, to `grpcbench run`.
Beside them: the floor of any Python client for that line (a grpc.aio script that
makes the same 200 calls, 50 at a time, and nothing else: the interpreter, grpc's
import, a channel), `grpcbench --version` and `--help` and the floors they stand on
(the bare interpreter, and a one-command Typer app's `--help`: Typer and rich's own
import and rendering, which any Typer CLI pays), and a 200-call run against a server
grpcbench starts itself (grpclib), where the generator's start overlaps the
server's. Every command runs once a round, rounds interleaved; medians and ratios
from the one run. Numbers to read side by side, not assertions.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clients import save_record

from grpcbench.base.child_setup import parse_ready_line

PROTO = Path(__file__).resolve().parents[1] / "protos" / "grpcbench" / "proto" / "helloworld.proto"

# The floor of a Typer CLI's --help: one command, one option, rich help as ours.
BARE_TYPER_APP = """import typer
app = typer.Typer()
@app.command()
def run(count: int = typer.Option(1, help="how many")) -> None: ...
@app.command()
def show() -> None: ...
app()
"""

# The floor of a Python client for ghz's 200-call line: grpc.aio, the same calls.
GRPC_AIO_FLOOR = """import asyncio
import sys

import grpc

from grpcbench.proto import helloworld_pb2, helloworld_pb2_grpc


async def main() -> None:
    async with grpc.aio.insecure_channel(sys.argv[1]) as channel:
        stub = helloworld_pb2_grpc.GreeterStub(channel)
        request = helloworld_pb2.HelloRequest(name="Joe")
        calls = iter(range(200))

        async def worker() -> None:
            for _ in calls:
                await stub.SayHello(request)

        await asyncio.gather(*(worker() for _ in range(50)))


asyncio.run(main())
"""


def _timed(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stderr[-400:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--greeter", default=os.environ.get("GRPCBENCH_GO_GREETER"))
    parser.add_argument("--save", help="write every figure as JSON")
    args = parser.parse_args()
    ghz = shutil.which("ghz")
    if not args.greeter or not ghz:
        raise SystemExit("needs the Go greeter (GRPCBENCH_GO_GREETER) and ghz on PATH")
    server = subprocess.Popen([args.greeter, "-port=0"], stdout=subprocess.PIPE)
    grpcbench = [sys.executable, "-m", "grpcbench"]
    with tempfile.TemporaryDirectory() as directory:
        bare_app = Path(directory) / "bare_typer_app.py"
        bare_app.write_text(BARE_TYPER_APP)
        floor = Path(directory) / "grpc_aio_floor.py"
        floor.write_text(GRPC_AIO_FLOOR)
        try:
            assert server.stdout is not None
            address = f"127.0.0.1:{parse_ready_line(server.stdout.readline())}"
            line = ["--insecure", "--proto", str(PROTO), "--call", "helloworld.Greeter.SayHello",
                    "-d", '{"name":"Joe"}', address]  # fmt: skip
            commands = {
                "ghz, 200 calls": [ghz, *line],
                "grpcbench run, 200 calls": [*grpcbench, "run", *line],
                "a grpc.aio script, 200 calls": [sys.executable, "-P", str(floor), address],
                "grpcbench run -s grpclib -n 200": [
                    *grpcbench,
                    "run",
                    "-s",
                    "grpclib",
                    "-n",
                    "200",
                    "--warmup",
                    "0",
                ],
                "grpcbench --version": [*grpcbench, "--version"],
                "grpcbench --help": [*grpcbench, "--help"],
                "a one-command Typer app's --help": [sys.executable, str(bare_app), "--help"],
                "import grpcbench.cli.app": [sys.executable, "-c", "import grpcbench.cli.app"],
                "python -c pass": [sys.executable, "-c", "pass"],
            }
            times: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(args.rounds):  # interleaved: drift hits every command alike
                for name, argv in commands.items():
                    times[name].append(_timed(argv))
        finally:
            server.terminate()
            server.wait(10)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.rounds} interleaved rounds, medians (every round's figure in brackets)")
    for name, median in medians.items():
        spread = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"  {name:<34} {median:6.3f} s   ({spread})")
    ratios = {
        "grpcbench run / ghz, 200 calls": (
            medians["grpcbench run, 200 calls"] / medians["ghz, 200 calls"]
        ),
        "grpcbench run / a grpc.aio script, 200 calls": (
            medians["grpcbench run, 200 calls"] / medians["a grpc.aio script, 200 calls"]
        ),
        "a grpc.aio script / ghz, 200 calls": (
            medians["a grpc.aio script, 200 calls"] / medians["ghz, 200 calls"]
        ),
        "grpcbench --help / a one-command Typer app's --help": (
            medians["grpcbench --help"] / medians["a one-command Typer app's --help"]
        ),
    }
    for key, value in ratios.items():
        print(f"  {key}: {value:.1f}x")
    if args.save:
        save_record(args.save, "startup", samples=times, medians=medians, ratios=ratios,
                    rounds=args.rounds)  # fmt: skip


if __name__ == "__main__":
    main()
