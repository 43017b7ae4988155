"""A Dask cluster from the real command-line tools (`dask scheduler`, `dask worker`),
as a team runs one: not grpcbench's children, so nothing of a run may stop them, and
each run's load on them must stop with the run."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DASK = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")


@dataclass(frozen=True)
class RealCluster:
    address: str
    processes: list[subprocess.Popen[bytes]]

    def alive(self) -> bool:
        return all(process.poll() is None for process in self.processes)


@contextlib.contextmanager
def real_cluster(folder: Path, workers: int) -> Iterator[RealCluster]:
    """A scheduler on 127.0.0.1 and ``workers`` one-thread workers; stopped after."""
    assert DASK is not None, "the dask command-line tool is not installed"
    scheduler_file = folder / "scheduler.json"
    processes = [
        subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(scheduler_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.2)  # written whole
        address = json.loads(scheduler_file.read_text())["address"]
        processes.append(
            subprocess.Popen(
                [DASK, "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                 "--nworkers", str(workers), "--no-dashboard", "--local-directory", str(folder)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        )  # fmt: skip
        from distributed import Client

        with Client(address, timeout=60) as client:  # every worker joined: all started
            client.wait_for_workers(workers, timeout=60)
        yield RealCluster(address, processes)
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
