"""The clients the benchmarks compare, each a ``LoadDriver`` measured like grpcbench's own.

- ``ScriptDriver``: a client script of its own: ``bare_loop.py``, forty lines of
  grpc.aio and nothing of grpcbench (the floor of a Python gRPC library client), or
  ``python_floor.py``, HTTP/2 frames in Python without gRPC's rules (the floor of
  a pure-Python client);
- ``H2loadDriver``: nghttp2's h2load posting the serialized request (no gRPC
  library at all: the floor of client cost per call);
- ``make_generators``: labels such as ``builtin:2@grpcio`` to drivers.

Shared by ``loadgen.py`` and ``crosscheck.py`` (neither imports the other).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from grpcbench.base import defaults
from grpcbench.base.child_setup import parse_ready_line
from grpcbench.base.errors import DriverError
from grpcbench.base.processes import Child, start_child
from grpcbench.load.catalogue import make_driver
from grpcbench.load.driver import MEASUREMENT_STARTED, DriverSettings, LoadDriver, ProgressCallback
from grpcbench.model.load_result import GeneratorJob, LoadResult
from grpcbench.observe.cpu_share import NeighbourMeter
from grpcbench.stats.histogram import LatencySummary
from grpcbench.targets.external import ExternalTarget

BARE_LOOP = Path(__file__).with_name("bare_loop.py")
PYTHON_FLOOR = Path(__file__).with_name("python_floor.py")


class ScriptDriver:
    """A client script of benchmarks/ (bare_loop.py, python_floor.py) as a LoadDriver,
    so it is measured like the others: the script prints ``{"event": "measuring"}``
    when its warm-up ends, then its calls, wall and CPU seconds as one JSON line."""

    def __init__(self, name: str, script: Path) -> None:
        self.name = name
        self.script = script

    async def run(self, spec: GeneratorJob, progress: ProgressCallback) -> LoadResult:
        argv = [
            sys.executable, "-P", str(self.script), spec.target,
            f"--concurrency={spec.share.concurrency}", f"--requests={spec.share.requests}",
            f"--warmup={spec.share.warmup_requests}",
        ]  # fmt: skip
        child = await start_child(argv, spec.settings.client_cpus[:1])
        neighbours = NeighbourMeter(spec.settings.client_cpus[:1])
        try:
            assert child.process.stdout is not None
            async for line in child.process.stdout:
                event = json.loads(line)
                if event.get("event") == "measuring":
                    neighbours.start()
                    progress(MEASUREMENT_STARTED, 0)
                    continue
                progress(event["calls"], 0)
                others_s, steal_share = neighbours.taken(1.0, float(event["cpu_s"]))
                return LoadResult(
                    driver=self.name,
                    concurrency=spec.share.concurrency,
                    connections=spec.share.connections,
                    statuses={"OK": int(event["calls"])},
                    latency=LatencySummary(),
                    wall_s=float(event["wall_s"]),
                    client_cpu_s=float(event["cpu_s"]),
                    client_others_s=others_s,
                    client_steal_share=steal_share,
                )
            raise DriverError(f"{self.script.name} failed: {child.stderr_tail()}")
        finally:
            await child.stop()


class H2loadDriver:
    """h2load (nghttp2) posting the serialized gRPC request: no gRPC library at all.

    Its CPU is read from the kernel's accounting of the finished child (a Python
    wrapper's RUSAGE_CHILDREN), so it is measured like the other clients."""

    name = "h2load"
    _WRAPPER = (
        "import resource, subprocess, sys;"
        " done = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
        " usage = resource.getrusage(resource.RUSAGE_CHILDREN);"
        " print(done.stdout); print(done.stderr, file=sys.stderr);"
        " print('CPU', usage.ru_utime + usage.ru_stime); sys.exit(done.returncode)"
    )

    def __init__(self, path: str) -> None:
        self.path = path

    async def _run(self, spec: GeneratorJob, requests: int, body: Path) -> tuple[int, float, float]:
        argv = [
            sys.executable, "-P", "-c", self._WRAPPER, self.path, f"-n{requests}", "-c1",
            f"-m{spec.share.concurrency}", "-t1", "-H", "content-type: application/grpc",
            "-H", "te: trailers", "-d", str(body),
            f"http://{spec.target}/helloworld.Greeter/SayHello",
        ]  # fmt: skip
        child = await start_child(argv, spec.settings.client_cpus[:1])
        try:
            assert child.process.stdout is not None
            output = (await child.process.stdout.read()).decode()
            await child.process.wait()
        finally:
            await child.stop()
        ok = re.search(r"(\d+) succeeded", output)
        rate = re.search(r"finished in ([\d.]+)(ms|s), ([\d.]+) req/s", output)
        cpu = re.search(r"^CPU ([\d.]+)", output, re.MULTILINE)
        if not (ok and rate and cpu):
            raise DriverError(f"h2load failed: {output[-400:]} {child.stderr_tail()}")
        wall = float(rate.group(1)) / (1000 if rate.group(2) == "ms" else 1)
        return int(ok.group(1)), wall, float(cpu.group(1))

    async def run(self, spec: GeneratorJob, progress: ProgressCallback) -> LoadResult:
        from grpcbench.proto import helloworld_pb2

        message = helloworld_pb2.HelloRequest(name="world").SerializeToString()
        with tempfile.TemporaryDirectory() as folder:
            body = Path(folder) / "request.bin"
            body.write_bytes(b"\0" + len(message).to_bytes(4, "big") + message)
            if spec.share.warmup_requests:
                await self._run(spec, spec.share.warmup_requests, body)
            neighbours = NeighbourMeter(spec.settings.client_cpus[:1])
            neighbours.start()
            progress(MEASUREMENT_STARTED, 0)
            calls, wall_s, cpu_s = await self._run(spec, spec.share.requests, body)
        progress(calls, 0)
        others_s, steal_share = neighbours.taken(1.0, cpu_s)
        missing = spec.share.requests - calls
        return LoadResult(
            driver=self.name, concurrency=spec.share.concurrency, connections=1,
            statuses={"OK": calls, "Unknown": missing} if missing > 0 else {"OK": calls},
            latency=LatencySummary(), wall_s=wall_s, client_cpu_s=cpu_s,
            client_others_s=others_s, client_steal_share=steal_share,
        )  # fmt: skip


def make_generators(names: str) -> dict[str, tuple[LoadDriver, str]]:
    """label -> (driver, client stack): ``builtin:2@grpcio`` is 2 processes on grpc.aio."""
    drivers: dict[str, tuple[LoadDriver, str]] = {}
    for entry in names.split(","):
        driver_part, _, stack = entry.partition("@")
        name, _, processes = driver_part.partition(":")
        stack = stack or defaults.CLIENT_STACK
        if name == "bare":
            drivers[entry] = (ScriptDriver("bare", BARE_LOOP), stack)
        elif name == "floor":
            drivers[entry] = (ScriptDriver("floor", PYTHON_FLOOR), stack)
        elif name == "h2load":
            drivers[entry] = (H2loadDriver(shutil.which("h2load") or "h2load"), stack)
        else:
            settings = DriverSettings(client_processes=int(processes or 1))
            drivers[entry] = (make_driver(name, settings), stack)
    return drivers


def save_record(path: str, benchmark: str, **fields: object) -> None:
    """A benchmark's runs as JSON, with the machine's metadata and the command line,
    for scripts/render_results.py (the docs' tables are rendered from these files)."""
    from grpcbench.model.metadata import collect_metadata

    record = {
        "benchmark": benchmark, "command": " ".join(sys.argv[1:]),
        "metadata": collect_metadata(), **fields,
    }  # fmt: skip
    Path(path).write_text(json.dumps(record, indent=1) + "\n")
    print(f"saved to {path}")


async def start_go_greeter(binary: str, cpus: tuple[int, ...]) -> tuple[Child, ExternalTarget]:
    """The Go greeter (benchmarks/greeter_go, built by the nox session) on a free port."""
    child = await start_child([binary, "-port=0"], cpus)
    assert child.process.stdout is not None
    port = parse_ready_line(await asyncio.wait_for(child.process.stdout.readline(), 30))
    if port is None:
        await child.stop()
        raise SystemExit(f"the Go greeter did not start: {child.stderr_tail()}")
    return child, ExternalTarget("go-greeter", f"127.0.0.1:{port}", child.pid)
