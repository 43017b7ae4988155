"""What live telemetry costs the generator (``nox -s telemetry_overhead``).

The Go greeter on CPU 0, ``grpcbench run --target`` on CPU 1 at an open-loop rate
(20,000/s unless given), with and without ``--prometheus`` (which turns on
``--interval 1s``: the generator then records every call into the interval's
histograms too, and the coordinator serves them), interleaved over several rounds.
Prints each run's generator CPU per call (the results file's ``client_cpu_s``
over its calls) and the medians' ratio. A number to track, not an assertion.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from grpcbench.base.child_setup import parse_ready_line

PROTO = Path(__file__).resolve().parents[1] / "protos/grpcbench/proto/helloworld.proto"


def one_run(target: str, rate: float, seconds: float, telemetry: bool) -> tuple[float, float]:
    """Generator CPU µs per call and achieved calls/s of one run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        command = [
            sys.executable, "-P", "-m", "grpcbench", "run", "--target", target,
            "--call", "helloworld.Greeter/SayHello", "--proto", str(PROTO), "-d", '{"name":"x"}',
            "--rate", f"{rate:g}", "-z", f"{seconds:g}s", "--warmup", "1s",
            "--output", str(out),
        ]  # fmt: skip
        if telemetry:
            command += ["--prometheus", "0"]
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
        (level,) = json.loads(out.read_text())["levels"]
    load = level["load"]
    calls = sum(load["statuses"].values())
    return load["client_cpu_s"] * 1e6 / calls, calls / load["wall_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--greeter", required=True, help="the Go greeter binary")
    parser.add_argument("--rate", type=float, default=20000.0)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    greeter = subprocess.Popen(["taskset", "-c", "0", args.greeter, "-port=0"],
                               stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert greeter.stdout is not None
        port = parse_ready_line(greeter.stdout.readline().encode())
        assert port is not None, "the Go greeter did not start"
        target = f"127.0.0.1:{port}"
        samples: dict[bool, list[float]] = {False: [], True: []}
        for round_number in range(args.repeat):
            for telemetry in (False, True):
                cpu, rate = one_run(target, args.rate, args.seconds, telemetry)
                samples[telemetry].append(cpu)
                label = "--prometheus" if telemetry else "without"
                print(f"round {round_number + 1} {label:>12}: {cpu:.2f} us/call, {rate:,.0f}/s")
        without, with_ = (statistics.median(samples[flag]) for flag in (False, True))
        print(f"median generator CPU per call: without {without:.2f} us, with --prometheus"
              f" {with_:.2f} us: {with_ / without - 1:+.1%}")  # fmt: skip
    finally:
        greeter.terminate()
        greeter.wait()


if __name__ == "__main__":
    main()
