"""What live telemetry costs the generator and the coordinator (``nox -s telemetry_overhead``).

The Go greeter on CPU 0, ``grpcbench run --target`` on CPU 1 at an open-loop rate
(20,000/s unless given), interleaved over several rounds in four modes: without
telemetry, ``--prometheus``, ``--otlp`` (to a receiver in this script that takes
and drops every push) and both. Each exporter turns on ``--interval 1s``: the
generator then records every call into the interval's histograms, and the
coordinator (the ``grpcbench run`` process itself, which serves and pushes them)
handles every interval. Prints, per run and as medians with their ratios to the
runs without telemetry:

- the generator's CPU per call (the results file's ``client_cpu_s`` over its calls);
- the coordinator's own CPU (its children's not counted), as a share of a core over
  the run's wall time, sampled every 0.1 s with psutil (issue 52's goal: at most 5%
  with both exporters on at 20,000 calls/s);
- how late the live intervals reached the coordinator, the worst of the run (the
  results file's ``interval_late_s``; issue 52's goal: never more than one interval).

``--save`` writes every run for scripts/render_results.py. Numbers to track, not
assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
from clients import save_record  # benchmarks/, this script's directory

from grpcbench.base.child_setup import parse_ready_line

PROTO = Path(__file__).resolve().parents[1] / "protos/grpcbench/proto/helloworld.proto"
MODES = ("off", "prometheus", "otlp", "both")


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that takes every push and keeps nothing."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def one_run(target: str, rate: float, seconds: float, mode: str, otlp: str) -> dict[str, object]:
    """One run: generator CPU per call, calls/s, and the coordinator's own CPU."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        command = [
            sys.executable, "-P", "-m", "grpcbench", "run", "--target", target,
            "--call", "helloworld.Greeter/SayHello", "--proto", str(PROTO), "-d", '{"name":"x"}',
            "--rate", f"{rate:g}", "-z", f"{seconds:g}s", "--warmup", "1s",
            "--client-cpus", "1", "--output", str(out),
        ]  # fmt: skip
        if mode in ("prometheus", "both"):
            command += ["--prometheus", "0"]
        if mode in ("otlp", "both"):
            command += ["--otlp", otlp]
        started = time.perf_counter()
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        coordinator = psutil.Process(run.pid)
        cpu_s = 0.0
        while run.poll() is None:  # its own CPU, read until it exits
            try:
                times = coordinator.cpu_times()
                cpu_s = times.user + times.system
            except psutil.Error:
                break
            time.sleep(0.1)
        wall_s = time.perf_counter() - started
        _, stderr = run.communicate(timeout=60)
        if run.returncode != 0:
            raise SystemExit(f"{mode} failed: {stderr.decode()[-600:]}")
        (level,) = json.loads(out.read_text())["levels"]
    load = level["load"]
    calls = sum(load["statuses"].values())
    return {
        "mode": mode, "calls": calls, "rate": calls / load["wall_s"],
        "generator_us_per_call": load["client_cpu_s"] * 1e6 / calls,
        "coordinator_cpu_s": cpu_s, "wall_s": wall_s,
        "coordinator_share": cpu_s / wall_s,
        "interval_late_s": load.get("interval_late_s"),  # None without --interval
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--greeter", required=True, help="the Go greeter binary")
    parser.add_argument("--rate", type=float, default=20000.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", type=lambda t: t.split(","), default=list(MODES))
    parser.add_argument("--save", help="write every run as JSON (scripts/render_results.py)")
    args = parser.parse_args()
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    otlp = f"http://127.0.0.1:{receiver.server_port}/v1/metrics"
    greeter = subprocess.Popen(["taskset", "-c", "0", args.greeter, "-port=0"],
                               stdout=subprocess.PIPE, text=True)  # fmt: skip
    runs: list[dict[str, object]] = []
    try:
        assert greeter.stdout is not None
        port = parse_ready_line(greeter.stdout.readline().encode())
        assert port is not None, "the Go greeter did not start"
        target = f"127.0.0.1:{port}"
        for round_number in range(1, args.repeat + 1):
            for mode in args.modes:
                run = one_run(target, args.rate, args.seconds, mode, otlp)
                runs.append({"round": round_number, **run})
                print(
                    f"round {round_number} {mode:>10}: generator"
                    f" {run['generator_us_per_call']:.2f} us/call, {run['rate']:,.0f}/s;"
                    f" coordinator {run['coordinator_cpu_s']:.2f} s CPU in {run['wall_s']:.1f} s"
                    f" ({run['coordinator_share']:.1%} of a core)"
                    + (f"; intervals up to {late:.3f} s late"
                       if (late := run["interval_late_s"]) is not None else "")
                )  # fmt: skip
    finally:
        greeter.terminate()
        greeter.wait()
        receiver.shutdown()

    def median(mode: str, figure: str) -> float:
        return statistics.median(float(r[figure]) for r in runs if r["mode"] == mode)  # type: ignore[arg-type]

    print(
        "\n| telemetry | generator us/call | vs off | coordinator, share of a core | vs off"
        " | intervals late, worst |"
    )
    print("|---|---|---|---|---|---|")
    base_generator = median("off", "generator_us_per_call")
    base_share = median("off", "coordinator_share")
    for mode in args.modes:
        generator, share = median(mode, "generator_us_per_call"), median(mode, "coordinator_share")
        lates = [float(r["interval_late_s"]) for r in runs  # type: ignore[arg-type]
                 if r["mode"] == mode and r["interval_late_s"] is not None]  # fmt: skip
        print(
            f"| {mode} | {generator:.2f} | {generator / base_generator:.2f}x"
            f" | {share:.1%} | {share / base_share:.2f}x"
            f" | {f'{max(lates):.3f} s' if lates else '-'} |"
        )
    if args.save:
        save_record(args.save, "telemetry-overhead", rounds=args.repeat, rate=args.rate,
                    seconds=args.seconds, runs=runs)  # fmt: skip


if __name__ == "__main__":
    main()
