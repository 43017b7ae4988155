"""Large messages: the client's CPU per MB on both stacks (``nox -s large_messages``).

A reply of several MB spans hundreds of DATA frames; the wire stack joins its
pieces once, when the message is whole (grpcbench.wire.messages), where it once
copied the bytes so far per frame (a 4 MB reply cost 41 ms of client CPU, grpc.aio
6 ms). This measures what a MB of reply costs each client stack now, on grpc-go's
interop TestService (benchmarks/interop_go, built by the nox session, never at
install), pinned to CPU 0, the client to CPU 1:

- unary: ``UnaryCall`` with a ``response_size`` of 1, 4 and 16 MB;
- stream: ``StreamingOutputCall``, four messages of that size per call.

Every client runs the same ``grpcbench run --target ... --call ...`` command in
turn, rounds interleaved; prints every run, the medians and the ratio wire /
grpc.aio of client CPU per MB (issue 36's goal: at most 1.5x). ``--save`` writes
every run for scripts/render_results.py. Numbers to track, not assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from clients import save_record  # benchmarks/, this script's directory

MB = 1 << 20
STREAM_MESSAGES = 4
STACKS = ("wire", "grpcio")


def request(kind: str, size: int) -> tuple[str, dict[str, object]]:
    if kind == "unary":
        return "UnaryCall", {"response_size": size}
    parameters = [{"size": size}] * STREAM_MESSAGES
    return "StreamingOutputCall", {"response_parameters": parameters}


def one_run(args: argparse.Namespace, protoset: Path, kind: str, size_mb: int, stack: str,
            out: Path) -> dict[str, object]:  # fmt: skip
    method, data = request(kind, size_mb * MB)
    server = subprocess.Popen(
        ["taskset", "-c", "0", args.interop, "-port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        address = server.stdout.readline().strip()
        calls = max(8, args.mb_per_run // size_mb // (STREAM_MESSAGES if kind == "stream" else 1))
        argv = [
            sys.executable, "-P", "-m", "grpcbench", "run", "--target", address,
            "--target-pid", str(server.pid), "--call", f"grpc.testing.TestService/{method}",
            "--protoset", str(protoset), "-d", json.dumps(data), "-c", "2", "-n", str(calls),
            "--warmup", "2", "--max-recv-message-size", f"{size_mb * 2}MiB",
            "--client-stack", stack, "--client-cpus", "1", "--output", str(out),
        ]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"{stack} {kind} {size_mb} MB failed: {done.stderr[-600:]}")
    finally:
        server.kill()
        server.wait(10)
    load = json.loads(out.read_text())["levels"][0]["load"]
    count = sum(load["statuses"].values())
    megabytes = (load["stream"]["bytes"] if load.get("stream") else 0) / MB
    if not megabytes:  # a unary reply: its size, per call
        megabytes = count * size_mb
    return {
        "kind": kind, "size_mb": size_mb, "stack": stack, "calls": count,
        "ok": load["statuses"].get("OK", 0) == count,
        "cpu_ms_per_mb": load["client_cpu_s"] * 1000 / megabytes,
        "mb_per_s": megabytes / load["wall_s"],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--interop", required=True, help="benchmarks/interop_go's binary")
    parser.add_argument("--sizes", type=lambda t: [int(s) for s in t.split(",")],
                        default=[1, 4, 16], help="reply sizes in MB")  # fmt: skip
    parser.add_argument("--kinds", type=lambda t: t.split(","), default=["unary", "stream"])
    parser.add_argument("--mb-per-run", type=int, default=256, help="MB of replies per run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--save", help="write every run as JSON (scripts/render_results.py)")
    args = parser.parse_args()
    runs: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as folder:
        protoset = Path(folder) / "testing.protoset"
        subprocess.run([args.interop, "-protoset", str(protoset)], check=True, timeout=60)
        for round_number in range(1, args.repeat + 1):
            for kind in args.kinds:
                for size in args.sizes:
                    for stack in STACKS:
                        run = one_run(args, protoset, kind, size, stack, Path(folder) / "r.json")
                        runs.append({"round": round_number, **run})
                        print(
                            f"{round_number:>3} {kind:>6} {size:>3} MB {stack:>7}"
                            f" {run['cpu_ms_per_mb']:>7.2f} ms CPU/MB {run['mb_per_s']:>8.1f} MB/s"
                            + ("" if run["ok"] else "  NOT ALL OK")
                        )  # fmt: skip
    print("\n| kind | size | wire ms CPU/MB | grpc.aio ms CPU/MB | wire / grpc.aio |")
    print("|---|---|---|---|---|")
    for kind in args.kinds:
        for size in args.sizes:
            wire, aio = (
                statistics.median(
                    float(r["cpu_ms_per_mb"])  # type: ignore[arg-type]
                    for r in runs
                    if (r["kind"], r["size_mb"], r["stack"]) == (kind, size, stack)
                )
                for stack in STACKS
            )
            print(f"| {kind} | {size} MB | {wire:.2f} | {aio:.2f} | {wire / aio:.2f}x |")
    if args.save:
        save_record(
            args.save, "large-messages", rounds=args.repeat, stream_messages=STREAM_MESSAGES,
            runs=runs,
        )  # fmt: skip


if __name__ == "__main__":
    main()
