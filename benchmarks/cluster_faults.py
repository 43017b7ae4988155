"""Dask faults against a real cluster: a CLI ``dask scheduler`` and N ``dask worker``s.

Run by ``nox -s cluster`` after the overhead benchmark (``--faults-only`` skips
that). A grpc.aio server is the target (``--target``, so the workers load it
through the network path); each fault runs one grpcbench level and checks what
a user must see:

- ``worker-9``: a worker killed mid-level: exit 4 within seconds, naming it;
- ``worker-stop``: a worker stopped (SIGSTOP) mid-level: exit 4 once the level's
  limit passes, naming it; the cluster is usable after SIGCONT;
- ``coordinator-9``: grpcbench killed with -9 mid-level: the target idles within
  5 s (the workers let the load go) and the next run starts at once;
- ``scheduler-9``: the scheduler killed mid-level: exit 4 in one line that says
  the scheduler was lost, the results so far kept, and the target idle from 6 s
  after the kill (the workers' lease ran out).

Each prints PASS or FAIL with what it saw; the exit status is the number of
failures (the last fault kills the scheduler, so it runs last).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec

GRPCBENCH = [sys.executable, "-m", "grpcbench", "run"]


class Cluster:
    """A scheduler and workers from Dask's own command line, torn down at the end."""

    def __init__(self, workers: int, workdir: Path) -> None:
        dask = shutil.which("dask") or str(Path(sys.executable).parent / "dask")
        scheduler_file = workdir / "scheduler.json"
        self.processes = [
            subprocess.Popen(
                [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                 "--scheduler-file", str(scheduler_file)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        ]  # fmt: skip
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        self.address = json.loads(scheduler_file.read_text())["address"]
        self.processes.append(
            subprocess.Popen(
                [dask, "worker", self.address, "--host", "127.0.0.1", "--nthreads", "1",
                 "--nworkers", str(workers), "--no-dashboard", "--local-directory",
                 str(workdir)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        )  # fmt: skip

    @property
    def scheduler(self) -> psutil.Process:
        return psutil.Process(self.processes[0].pid)

    def worker_processes(self) -> list[psutil.Process]:
        """The worker processes (the nanny's children), not the nanny itself."""
        return [
            child for child in psutil.Process(self.processes[1].pid).children(recursive=True)
            if "spawn_main" in " ".join(child.cmdline())
        ]  # fmt: skip

    def loaded_worker(self) -> psutil.Process:
        """A worker that runs the level's generator: the busiest over half a second
        (the run uses fewer workers than there are, so the first may be idle)."""
        workers = self.worker_processes()
        before = {worker.pid: cpu_s(worker) for worker in workers}
        time.sleep(0.5)
        return max(workers, key=lambda worker: cpu_s(worker) - before[worker.pid])

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def cpu_s(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def until(check: Callable[[], bool], limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


def loaded(target: psutil.Process, limit_s: float = 60) -> bool:
    """The target burns CPU: the cluster's measured load is on it."""

    def busy() -> bool:
        before = cpu_s(target)
        time.sleep(0.5)
        return cpu_s(target) - before > 0.1

    return until(busy, limit_s)


def level(cluster: Cluster, target: str, workers: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*GRPCBENCH, "--cluster", cluster.address, "--cluster-workers", str(workers),
         "--target", target, "-c", str(workers * 2), "--warmup", "0", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if "grpcbench: error:" in line]
    return lines[0] if len(lines) == 1 and "Traceback" not in stderr else ""


def fault_worker_kill(cluster: Cluster, target: str, pid: int, workers: int) -> tuple[bool, str]:
    run = level(cluster, target, workers, "--duration", "60s")
    if not loaded(psutil.Process(pid)):
        run.kill()
        return False, "the target was never loaded"
    victim = cluster.loaded_worker()
    killed = time.monotonic()
    victim.kill()
    _, stderr = run.communicate(timeout=120)
    took = time.monotonic() - killed
    line = one_line(stderr)
    ok = run.returncode == 4 and "cluster worker" in line and took < 30
    return ok, f"exit {run.returncode} after {took:.1f} s: {line or stderr[-300:]}"


def fault_worker_stop(cluster: Cluster, target: str, pid: int, workers: int) -> tuple[bool, str]:
    run = level(cluster, target, workers, "--duration", "2s", "--max-level", "3s",
                "--timeout", "1s")  # fmt: skip
    if not loaded(psutil.Process(pid)):
        run.kill()
        return False, "the target was never loaded"
    victim = cluster.loaded_worker()
    victim.send_signal(signal.SIGSTOP)
    try:
        _, stderr = run.communicate(timeout=180)
    finally:
        victim.send_signal(signal.SIGCONT)
    line = one_line(stderr)
    ok = run.returncode == 4 and "cluster worker" in line
    return ok, f"exit {run.returncode}: {line or stderr[-300:]}"


def fault_coordinator_kill(
    cluster: Cluster, target: str, pid: int, workers: int
) -> tuple[bool, str]:
    process = psutil.Process(pid)
    run = level(cluster, target, workers, "--duration", "60s")
    if not loaded(process):
        run.kill()
        return False, "the target was never loaded"
    run.kill()
    run.wait(10)
    time.sleep(5.0)
    before = cpu_s(process)
    time.sleep(3.0)
    spent = cpu_s(process) - before
    started = time.monotonic()
    again = level(cluster, target, workers, "-n", "400")
    _, stderr = again.communicate(timeout=180)
    took = time.monotonic() - started
    ok = spent < 0.3 and again.returncode == 0 and took < 60
    failed = "" if again.returncode == 0 else f": {stderr[-300:]}"
    return ok, (
        f"target CPU {spent:.2f} s over 3 s, 5 s after the kill; next run exit"
        f" {again.returncode} in {took:.1f} s{failed}"
    )


def fault_scheduler_kill(
    cluster: Cluster, target: str, pid: int, workers: int, out: Path
) -> tuple[bool, str]:
    run = level(cluster, target, workers, "--duration", "60s", "--output", str(out))
    if not loaded(psutil.Process(pid)):
        run.kill()
        return False, "the target was never loaded"
    target = psutil.Process(pid)
    cluster.scheduler.kill()
    killed = time.monotonic()
    _, stderr = run.communicate(timeout=180)
    took = time.monotonic() - killed
    line = one_line(stderr)
    kept = out.exists() and json.loads(out.read_text())["status"] in ("failed", "interrupted")
    # The workers' lease runs out without the scheduler: their load stops within seconds.
    time.sleep(max(0.0, 6.0 - (time.monotonic() - killed)))
    before = cpu_s(target)
    time.sleep(3.0)
    spent = cpu_s(target) - before
    named = "lost the Dask scheduler" in line
    ok = run.returncode == 4 and named and kept and took < 60 and spent < 0.3
    return ok, (
        f"exit {run.returncode} after {took:.1f} s, results kept: {kept}, target CPU"
        f" {spent:.2f} s over 3 s from 6 s after the kill: {line or stderr[-3000:]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--only", default="", help="comma-separated fault names to run")
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="grpcbench-faults-") as folder:
        workdir = Path(folder)
        loop = asyncio.new_event_loop()
        server = loop.run_until_complete(
            start_server(parse_server_spec("grpcio-aio"), "hello", {})
        )  # fmt: skip
        cluster = Cluster(args.workers, workdir)
        try:
            if not until(lambda: len(cluster.worker_processes()) == args.workers, 120):
                sys.exit(f"{args.workers} dask workers did not start")
            time.sleep(3.0)  # registered with the scheduler
            print(f"cluster {cluster.address}: {args.workers} workers; target {server.address}")
            only = set(args.only.split(",")) if args.only else None
            faults: list[tuple[str, Callable[[], tuple[bool, str]]]] = [
                ("worker-9", lambda: fault_worker_kill(
                    cluster, server.address, server.pid, args.workers - 1)),
                ("worker-stop", lambda: fault_worker_stop(
                    cluster, server.address, server.pid, args.workers - 2)),
                ("coordinator-9", lambda: fault_coordinator_kill(
                    cluster, server.address, server.pid, args.workers - 2)),
                ("scheduler-9", lambda: fault_scheduler_kill(
                    cluster, server.address, server.pid, args.workers - 2, workdir / "r.json")),
            ]  # fmt: skip
            for name, fault in faults:
                if only is not None and name not in only:
                    continue
                ok, seen = fault()
                failures += not ok
                print(f"{'PASS' if ok else 'FAIL'} {name:<14} {seen}", flush=True)
                time.sleep(2.0)  # a killed worker's nanny restarts it meanwhile
        finally:
            cluster.close()
            loop.run_until_complete(server.stop())
            loop.close()
    sys.exit(failures)


if __name__ == "__main__":
    main()
