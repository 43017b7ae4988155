"""A measured tree counts the processes born and reaped during the level (a database's
backends), and its memory counts shared pages once; --backing-cpus places backing services."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import psutil
import pytest

from grpcbench.base.errors import UsageError
from grpcbench.model.placement import Placement, build_placement
from grpcbench.observe.monitor import ProcessMonitor
from tests.conftest import GRPCBENCH

# After 0.3 s, a child burns 0.6 s of CPU and is reaped; the parent says so, then idles.
_PARENT = """
import subprocess, sys, time
time.sleep(0.3)
subprocess.run([sys.executable, "-c",
    "import time\\nend = time.process_time() + 0.6\\nwhile time.process_time() < end: pass"])
print("reaped", flush=True)
time.sleep(60)
"""

# Two processes mapping the same 64 MiB of shared memory, touched by both a MiB at a
# time (no 64 MiB copy on either heap, however slowly a busy machine runs them); the
# parent says "ready" once the child has touched every page.
_SHARED = """
import mmap, os, time
region = mmap.mmap(-1, 64 << 20)
chunk = b"x" * (1 << 20)
for _ in range(64):
    region.write(chunk)
done_r, done_w = os.pipe()
if os.fork() == 0:
    for page in range(0, 64 << 20, 4096):  # a byte of each page maps it here too
        region[page]
    os.write(done_w, b"1")
    time.sleep(30); os._exit(0)
os.read(done_r, 1)
print("ready", flush=True)
time.sleep(30)
"""


def test_a_child_born_and_reaped_mid_level_is_counted() -> None:
    parent = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True)
    try:

        async def measure() -> float:
            monitor = ProcessMonitor(parent.pid)
            monitor.start()
            # The child came and went meanwhile: however long a busy machine made it take.
            assert parent.stdout is not None
            line = await asyncio.wait_for(asyncio.to_thread(parent.stdout.readline), 60)
            assert line.strip() == "reaped"
            await asyncio.sleep(0.2)  # one more sample of the parent alone
            usage = monitor.stop()
            assert usage is not None
            return usage.cpu_s

        assert asyncio.run(measure()) >= 0.5
    finally:
        parent.kill()
        parent.wait()


def test_shared_pages_count_once_in_a_tree() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-P", "-c", _SHARED], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline().strip() == "ready"  # mapped, written, forked, touched

        async def measure() -> tuple[int, str, int]:
            monitor = ProcessMonitor(parent.pid)
            monitor.start()
            await asyncio.sleep(0.6)
            usage = monitor.stop()
            assert usage is not None
            return usage.peak_rss_bytes, usage.peak_rss_method, usage.processes

        peak, method, processes = asyncio.run(measure())
        assert processes == 2 and method == "sampled pss"
        # Summed RSS would be over 128 MiB; PSS counts the 64 MiB once.
        assert 64 << 20 <= peak < 110 << 20
    finally:
        for child in psutil.Process(parent.pid).children():
            child.kill()
        parent.kill()
        parent.wait()


def test_backing_cpus_are_their_own_or_the_generators() -> None:
    assert build_placement(True, "0", "1").backing_cpus == (1,)
    placement = build_placement(True, "0", "1", "0")
    assert placement.backing_cpus == (0,)
    assert "embedded backing services on CPU 0" in placement.describe()
    assert Placement.from_json(placement.to_json()) == placement
    assert Placement.from_json(build_placement(True, "0", "1").to_json()).chosen_backing_cpus == ()
    with pytest.raises(UsageError, match="--no-pin cannot be combined"):
        build_placement(False, None, None, "1")
    with pytest.raises(UsageError, match="CPU 4096 is not available"):
        build_placement(True, "0", "1", "4096")


def test_grpcbench_itself_runs_beside_the_generator_and_says_so() -> None:
    """The coordinator (live telemetry, merging, the console) is placed like the server
    and the generator: on the generator's CPUs, shown, and kept in the results; a file
    from before it was placed reads as "any CPU", which it was."""
    placement = build_placement(True, "0", "1")
    assert placement.coordinator_cpus == (1,)
    assert placement.describe().endswith("grpcbench itself on CPU 1")
    assert Placement.from_json(placement.to_json()) == placement
    old = {key: value for key, value in placement.to_json().items() if key != "coordinator_cpus"}
    assert Placement.from_json(old).describe().endswith("grpcbench itself on any CPU")
    assert build_placement(False, None, None).coordinator_cpus == ()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs to pin")
def test_a_pinned_process_pins_every_thread_and_gives_each_its_cpus_back() -> None:
    import threading

    from grpcbench.base.child_setup import process_pinned

    first = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    seen: dict[str, set[int]] = {}
    started, release = threading.Event(), threading.Event()

    def waiting() -> None:
        started.set()
        release.wait(10)
        seen["thread"] = os.sched_getaffinity(0)

    thread = threading.Thread(target=waiting)
    thread.start()
    started.wait(10)
    with process_pinned([first]):
        seen["main"] = os.sched_getaffinity(0)
        release.set()
        thread.join(10)
    assert seen == {"main": {first}, "thread": {first}}
    assert os.sched_getaffinity(0) == before


def test_the_placement_is_in_the_header() -> None:
    result = subprocess.run(
        [*GRPCBENCH, "run", "--scenario", "s3-list", "--backing-cpus", "0", "--dry-run"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "embedded backing services on CPU 0" in result.stdout
