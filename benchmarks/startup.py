"""Start-up, side by side (``nox -s startup``): a short ghz line's wall time, ghz vs grpcbench.

A ghz user feels a tool's start-up on every run: the same 200-call line (ghz's
default -n, -c 50) against the Go greeter (benchmarks/greeter_go, built by the
session), given to ghz and, with the binary's name swapped, to `grpcbench run`,
interleaved over rounds. It prints each tool's median wall time and their
ratio, and what part of grpcbench's is spent before any call: the interpreter
and its imports (``python -c "import grpcbench.cli.app"``), with the bare
interpreter beside it. Numbers to read side by side, not assertions.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from grpcbench.base.child_setup import parse_ready_line

PROTO = Path(__file__).resolve().parents[1] / "protos" / "grpcbench" / "proto" / "helloworld.proto"


def _timed(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stderr[-400:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--greeter", default=os.environ.get("GRPCBENCH_GO_GREETER"))
    args = parser.parse_args()
    ghz = shutil.which("ghz")
    if not args.greeter or not ghz:
        raise SystemExit("needs the Go greeter (GRPCBENCH_GO_GREETER) and ghz on PATH")
    server = subprocess.Popen([args.greeter, "-port=0"], stdout=subprocess.PIPE)
    try:
        assert server.stdout is not None
        address = f"127.0.0.1:{parse_ready_line(server.stdout.readline())}"
        line = ["--insecure", "--proto", str(PROTO), "--call", "helloworld.Greeter.SayHello",
                "-d", '{"name":"Joe"}', address]  # fmt: skip
        tools = {
            "ghz": [ghz, *line],
            "grpcbench": [sys.executable, "-m", "grpcbench", "run", *line],
            "python -c pass": [sys.executable, "-c", "pass"],
            "import grpcbench.cli.app": [sys.executable, "-c", "import grpcbench.cli.app"],
        }
        times: dict[str, list[float]] = {name: [] for name in tools}
        for _ in range(args.rounds):  # interleaved: drift hits every tool alike
            for name, argv in tools.items():
                times[name].append(_timed(argv))
    finally:
        server.terminate()
        server.wait(10)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"a 200-call ghz line against the Go greeter, {args.rounds} interleaved rounds")
    for name, median in medians.items():
        spread = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"  {name:<26} median {median:6.3f} s   ({spread})")
    print(f"  grpcbench / ghz wall time: {medians['grpcbench'] / medians['ghz']:.1f}x")


if __name__ == "__main__":
    main()
