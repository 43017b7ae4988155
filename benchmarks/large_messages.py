"""Large messages: the client's CPU per MB on both stacks (``nox -s large_messages``).

A message of several MB spans hundreds of DATA frames. The wire stack never joins
a reply it only counts and joins a delivered one once (grpcbench.wire.messages),
and sends a request's frames as views of its body (grpcbench.wire.flow_control).
This measures what a MB costs each client stack, in both directions, on grpc-go's
interop TestService (benchmarks/interop_go, built by the nox session, never at
install), pinned to CPU 0, the client to CPU 1:

- ``reply``: ``UnaryCall`` with a ``response_size`` of N MB;
- ``request``: ``UnaryCall`` with a payload of N MB (``-D`` from a file);
- ``stream-reply``: ``StreamingOutputCall``, four messages of N MB per call;
- ``stream-request``: ``StreamingInputCall``, four payloads of N MB per call;

each plain and with ``--max-send-message-size`` (``limits``: a flag that once took
calls off the wire stack's fast path). Every client runs the same ``grpcbench run
--target ... --call ...`` command in turn, rounds interleaved; prints every run, the
medians and the ratio wire / grpc.aio of client CPU per MB (issue 52's goal: at most
1.0x), and the minor page faults per call (``getrusage`` of the run less that of a run of one
measured call after the same warm-up, over the difference of calls: a client that
allocates fresh multi-MB buffers per call faults them in each time; what a run or
its warm-up costs once is in both, and cancels). ``--save`` writes every run for
scripts/render_results.py. Numbers to track, not assertions.
"""

from __future__ import annotations

import argparse
import base64
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from clients import save_record  # benchmarks/, this script's directory

MB = 1 << 20
STREAM_MESSAGES = 4
STACKS = ("wire", "grpcio")
KINDS = ("reply", "request", "stream-reply", "stream-request")
FLAGS = ("plain", "limits")


# The TestService method each kind of call uses.
METHODS = {
    "reply": "UnaryCall",
    "request": "UnaryCall",
    "stream-reply": "StreamingOutputCall",
    "stream-request": "StreamingInputCall",
}


def request_data(kind: str, size: int) -> object:
    """The request data (JSON) of one kind of call of ``size`` bytes."""
    if kind == "reply":
        return {"response_size": size}
    body = base64.b64encode(b"x" * size).decode()
    if kind == "request":
        return {"payload": {"body": body}}
    if kind == "stream-reply":
        return {"response_parameters": [{"size": size}] * STREAM_MESSAGES}
    return [{"payload": {"body": body}}] * STREAM_MESSAGES


def one_run(args: argparse.Namespace, folder: Path, kind: str, size_mb: int, flags: str,
            stack: str, baselines: dict[tuple[object, ...], int]) -> dict[str, object]:  # fmt: skip
    """One measured run, and (once per case) a run of one measured call after the same
    warm-up: the difference of their page faults is what the extra calls cost, without
    the run's start-up or its warm-up's one-time cost (which once counted as the calls':
    a 16 MB stream request's 112 MB read as 3,185 faults a call)."""
    out = folder / "r.json"
    messages = STREAM_MESSAGES if kind.startswith("stream") else 1
    calls = max(8, args.mb_per_run // size_mb // messages)
    key = (kind, size_mb, flags, stack)
    if key not in baselines:
        baselines[key] = _grpcbench(args, folder, kind, size_mb, flags, stack, 1, 2, out)
    faults = _grpcbench(args, folder, kind, size_mb, flags, stack, calls, 2, out)
    load = json.loads(out.read_text())["levels"][0]["load"]
    count = sum(load["statuses"].values())
    megabytes = count * size_mb * messages
    return {
        "kind": kind, "size_mb": size_mb, "flags": flags, "stack": stack, "calls": count,
        "ok": load["statuses"].get("OK", 0) == count,
        "cpu_ms_per_mb": load["client_cpu_s"] * 1000 / megabytes,
        "mb_per_s": megabytes / load["wall_s"],
        "faults_per_call": (faults - baselines[key]) / (count - 1),
    }  # fmt: skip


def _grpcbench(args: argparse.Namespace, folder: Path, kind: str, size_mb: int, flags: str,
               stack: str, calls: int, warmup: int, out: Path) -> int:  # fmt: skip
    """``grpcbench run`` of ``calls`` calls on a fresh server: its minor page faults."""
    method = METHODS[kind]
    data_file = folder / f"{kind}-{size_mb}.json"
    if not data_file.exists():  # built once per case: a 16 MB request is 21 MB of base64
        data_file.write_text(json.dumps(request_data(kind, size_mb * MB)))
    limit = f"{size_mb * 2}MiB"
    server = subprocess.Popen(
        ["taskset", "-c", "0", args.interop, "-port", "0", "-max-recv", str(size_mb * 2 * MB)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        address = server.stdout.readline().strip()
        argv = [
            sys.executable, "-P", "-m", "grpcbench", "run", "--target", address,
            "--target-pid", str(server.pid), "--call", f"grpc.testing.TestService/{method}",
            "--protoset", str(folder / "testing.protoset"), "-D", str(data_file), "-c", "2",
            "-n", str(calls), "--warmup", str(warmup), "--max-recv-message-size", limit,
            "--client-stack", stack, "--client-cpus", "1", "--output", str(out),
        ]  # fmt: skip
        if flags == "limits":
            argv += ["--max-send-message-size", limit]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
        faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before
        if done.returncode != 0:
            raise SystemExit(f"{stack} {kind} {size_mb} MB {flags} failed: {done.stderr[-600:]}")
    finally:
        server.kill()
        server.wait(10)
    return faults


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--interop", required=True, help="benchmarks/interop_go's binary")
    parser.add_argument("--sizes", type=lambda t: [int(s) for s in t.split(",")],
                        default=[1, 4, 16], help="message sizes in MB")  # fmt: skip
    parser.add_argument("--kinds", type=lambda t: t.split(","), default=list(KINDS))
    parser.add_argument("--flags", type=lambda t: t.split(","), default=list(FLAGS))
    parser.add_argument("--mb-per-run", type=int, default=1024, help=(
        "MB of messages per measured run (128 made a 16 MB run 8 calls, 0.15 s: its"
        " CPU per MB moved by a third between rounds)"))  # fmt: skip
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--save", help="write every run as JSON (scripts/render_results.py)")
    args = parser.parse_args()
    runs: list[dict[str, object]] = []
    baselines: dict[tuple[object, ...], int] = {}
    cases = [(k, s, f) for k in args.kinds for s in args.sizes for f in args.flags]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        protoset = folder / "testing.protoset"
        subprocess.run([args.interop, "-protoset", str(protoset)], check=True, timeout=60)
        for round_number in range(1, args.repeat + 1):
            for kind, size, flags in cases:
                for stack in STACKS:
                    run = one_run(args, folder, kind, size, flags, stack, baselines)
                    runs.append({"round": round_number, **run})
                    print(
                        f"{round_number:>3} {kind:>14} {size:>3} MB {flags:>6} {stack:>7}"
                        f" {run['cpu_ms_per_mb']:>7.2f} ms CPU/MB {run['mb_per_s']:>8.1f} MB/s"
                        f" {run['faults_per_call']:>8.0f} faults/call"
                        + ("" if run["ok"] else "  NOT ALL OK")
                    )  # fmt: skip
    print("\n| kind | size | flags | wire ms CPU/MB | grpc.aio ms CPU/MB | wire / grpc.aio"
          " | faults/call wire, grpc.aio |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for kind, size, flags in cases:
        cell = [r for r in runs if (r["kind"], r["size_mb"], r["flags"]) == (kind, size, flags)]
        wire, aio = (
            statistics.median(float(r["cpu_ms_per_mb"]) for r in cell if r["stack"] == stack)  # type: ignore[arg-type]
            for stack in STACKS
        )
        faults = (
            statistics.median(float(r["faults_per_call"]) for r in cell if r["stack"] == stack)  # type: ignore[arg-type]
            for stack in STACKS
        )
        print(
            f"| {kind} | {size} MB | {flags} | {wire:.2f} | {aio:.2f} | {wire / aio:.2f}x"
            f" | {', '.join(f'{f:.0f}' for f in faults)} |"
        )
    if args.save:
        save_record(
            args.save, "large-messages", rounds=args.repeat, stream_messages=STREAM_MESSAGES,
            mb_per_run=args.mb_per_run, runs=runs,
        )  # fmt: skip


if __name__ == "__main__":
    main()
