"""Instructions per unary call, which load on the machine cannot move (``nox -s loadgen``).

CPU time on a shared machine moves by 1.5x between runs minutes apart; the count
of instructions a client executes does not. Each client runs under valgrind's
callgrind twice against the same server, for ``small`` and for ``large`` calls
(c=50, one connection where it has a choice), and the difference of its
"Collected" totals over the difference of calls is what one call costs it, with
start-up and warm-up taken out:

- ``h2load`` (nghttp2): the gRPC request posted as a raw HTTP/2 body, the floor of
  client cost per call;
- ``floor``: benchmarks/python_floor.py, HTTP/2 frames in Python without gRPC's rules;
- ``builtin``: grpcbench's generator process itself (``python -m
  grpcbench.load.generator`` given the level's job, the wire stack on uvloop), so
  the coordinator's own instructions are not in its figure;
- ``builtin-1000``: the same at c=1000 over 1,000 connections. Instructions are the
  process's own: the kernel's work in each connection's read() and write() is not in
  them (``nox -s loadgen``'s CPU time has it).

Run on its own: ``python benchmarks/instructions.py --greeter BINARY``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from grpcbench.base.child_setup import parse_ready_line
from grpcbench.model.load_result import GeneratorJob
from grpcbench.model.plan import LevelPlan, LoadSettings

FLOOR = Path(__file__).with_name("python_floor.py")
CONCURRENCY = 50
# The built-in generator at c=1000 over 1,000 connections, one call in flight on each:
# what a connection costs (issue 52: at most 1.5x one connection's instructions).
MANY_CONNECTIONS = "builtin-1000"
_COLLECTED = re.compile(r"Collected : (\d+)")


def collected(argv: list[str], stdin: str | None = None) -> int:
    """The instructions ``argv`` executed, every process it starts included (callgrind)."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--trace-children=no",
             f"--callgrind-out-file={folder}/callgrind.%p", *argv],
            input=stdin, capture_output=True, text=True, timeout=1800, check=False,
        )  # fmt: skip
    found = _COLLECTED.findall(done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"callgrind of {argv[0]} failed: {done.stderr[-800:]}")
    return sum(int(count) for count in found)


def generator_instructions(run_args: list[str], calls: int, cwd: Path) -> int:
    """The instructions of the built-in generator's process in ``grpcbench run RUN_ARGS
    -n CALLS --warmup 0`` (callgrind following the run's children; the coordinator's
    and the server's are left out): a mix, a flow, any option the run takes."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--trace-children=yes",
             f"--callgrind-out-file={folder}/callgrind.%p", sys.executable, "-P", "-m",
             "grpcbench", "run", *run_args, "-n", str(calls), "--warmup", "0",
             "--output", f"{folder}/r.json"],
            capture_output=True, text=True, timeout=3600, check=True, cwd=cwd,
        )  # fmt: skip
        total = 0
        for path in Path(folder).glob("callgrind.*"):
            text = path.read_text(errors="replace")
            head = text[:4000]
            if "grpcbench.load.generator" not in head:
                continue
            found = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
            if found is None:
                raise SystemExit(f"callgrind wrote no total in {path}")
            total += int(found.group(1))
    if not total:
        raise SystemExit("callgrind saw no generator process")
    return total


def builtin_argv(
    target: str, calls: int, concurrency: int = CONCURRENCY, connections: int = 0
) -> tuple[list[str], str]:
    """The generator process and its one job: ``calls`` calls of SayHello at c=50 (or
    ``concurrency``, over ``connections``; 0: the default strategy's, one here)."""
    settings = LoadSettings(requests=calls, warmup_requests=0, warmup_s=0.0,
                            sample_interval_s=0.0)  # fmt: skip
    plan = LevelPlan(concurrency, channels=connections)
    job = GeneratorJob.for_level(target, "hello", plan, settings)
    return [sys.executable, "-P", "-m", "grpcbench.load.generator"], json.dumps(job.to_json())


def floor_argv(target: str, calls: int) -> list[str]:
    return [sys.executable, "-P", str(FLOOR), target, f"--concurrency={CONCURRENCY}",
            f"--requests={calls}", "--warmup=0"]  # fmt: skip


def h2load_argv(target: str, calls: int, body: Path) -> list[str]:
    return [shutil.which("h2load") or "h2load", f"-n{calls}", "-c1", f"-m{CONCURRENCY}", "-t1",
            "-H", "content-type: application/grpc", "-H", "te: trailers", "-d", str(body),
            f"http://{target}/helloworld.Greeter/SayHello"]  # fmt: skip


def per_call(client: str, target: str, small: int, large: int) -> float:
    """Instructions per call of ``client``: the difference of two runs over their calls."""
    from grpcbench.proto import helloworld_pb2

    counts = []
    with tempfile.TemporaryDirectory() as folder:
        body = Path(folder) / "request.bin"
        message = helloworld_pb2.HelloRequest(name="world").SerializeToString()
        body.write_bytes(b"\0" + len(message).to_bytes(4, "big") + message)
        for calls in (small, large):
            if client in ("builtin", MANY_CONNECTIONS):
                many = client == MANY_CONNECTIONS
                argv, job = builtin_argv(target, calls, *((1000, 1000) if many else ()))
                counts.append(collected(argv, job + "\n"))
            elif client == "floor":
                counts.append(collected(floor_argv(target, calls)))
            else:
                counts.append(collected(h2load_argv(target, calls, body)))
    return (counts[1] - counts[0]) / (large - small)


def instructions_table(target: str, clients: list[str], small: int, large: int) -> dict[str, float]:
    """Each client's instructions per call, printed with its ratio to the first's."""
    figures: dict[str, float] = {}
    for client in clients:
        if client == "h2load" and not shutil.which("h2load"):
            print("instructions: h2load is not installed (Debian nghttp2-client); skipped")
            continue
        figures[client] = per_call(client, target, small, large)
        print(f"instructions per call, {client}: {figures[client]:,.0f}")
    if figures:
        base_name, base = next(iter(figures.items()))
        print(f"\n| client | instructions per call | vs {base_name} |\n|---|---|---|")
        for client, count in figures.items():
            print(f"| {client} | {count:,.0f} | {count / base:.2f}x |")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--greeter", required=True, help="benchmarks/greeter_go's binary")
    parser.add_argument("--clients", type=lambda t: t.split(","), default=["h2load", "floor",
                        "builtin"])  # fmt: skip
    parser.add_argument("--calls", type=lambda t: [int(n) for n in t.split(",")],
                        default=[2000, 12000], help="the two runs' calls")  # fmt: skip
    args = parser.parse_args()
    greeter = subprocess.Popen([args.greeter, "-port=0"], stdout=subprocess.PIPE, text=True)
    try:
        assert greeter.stdout is not None
        port = parse_ready_line(greeter.stdout.readline().encode())
        assert port is not None, "the Go greeter did not start"
        instructions_table(f"127.0.0.1:{port}", args.clients, *args.calls)
    finally:
        greeter.kill()
        greeter.wait()


if __name__ == "__main__":
    main()
