"""The client's memory per call, the seed's B/op and allocs/op, from a separate untimed pass.

``--client-allocations N``: after a level, N more calls of its workload run one
after another in a process of their own (``python -m grpcbench.load.allocations``)
while memray records every allocation, Python's object allocator included. Bytes
and allocations per call are what a Go benchmark's ``-benchmem`` reports. The pass
is separate and untimed, so tracing never slows the measured phase.

Why memray and not tracemalloc: tracemalloc reports the memory still held and its
peak, not what was allocated and freed along the way, which is what B/op counts.
One untraced call first, so one-time costs (imports, caches, the connection) are
left out. pymalloc's arenas (mmap) are not counted beside the objects in them.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.model.allocations import ClientAllocations

EXTRA_HINT = "pip install 'grpcbench[profile]'"
PASS_TIMEOUT_S = 600.0


def check_available() -> None:
    """Before a run: one line naming the extra when memray is missing."""
    import importlib.util

    if importlib.util.find_spec("memray") is None:
        raise UsageError(f"--client-allocations needs memray: {EXTRA_HINT}")


def totals(path: Path) -> tuple[int, int]:
    """Bytes and allocations recorded in a memray capture file (frees not counted)."""
    from memray import AllocatorType, FileReader

    counted = {
        kind
        for kind in AllocatorType
        if kind.name not in ("FREE", "PYMALLOC_FREE", "MUNMAP", "MMAP")
    }
    size = count = 0
    for record in FileReader(str(path)).get_allocation_records():
        if record.allocator in counted:
            size += record.size
            count += 1
    return size, count


async def _traced_calls(spec_json: dict[str, Any], calls: int, capture: Path) -> int:
    """The calls, one at a time on one connection, after an untraced one; how many
    ended OK."""
    import memray

    from grpcbench.load.calls import Dialer, call_status
    from grpcbench.load.engine import make_workload
    from grpcbench.model.load_result import GeneratorJob

    spec = GeneratorJob.from_json(spec_json)
    channel = Dialer.of(spec).open()
    try:
        call = make_workload(spec).bind(channel)
        timeout = spec.settings.timeout_s
        await call_status(call, timeout)  # one-time costs stay out of the figures
        ok = 0
        with memray.Tracker(str(capture), trace_python_allocators=True, native_traces=False):
            for _ in range(calls):
                status, _, _ = await call_status(call, timeout)
                ok += status == "OK"
        return ok
    finally:
        await channel.close()


def main() -> None:
    """The pass's process: a spec and a count on stdin, one JSON line on stdout."""
    request = json.loads(sys.stdin.readline())
    from grpcbench.base.child_setup import setup_child

    setup_child(request["spec"]["settings"].get("client_cpus") or ())
    from importlib.metadata import version

    with tempfile.TemporaryDirectory(prefix="grpcbench-alloc-") as directory:
        capture = Path(directory) / "capture.bin"
        calls = int(request["calls"])
        ok = asyncio.run(_traced_calls(request["spec"], calls, capture))
        size, count = totals(capture)
    figures = ClientAllocations(
        calls, ok, size / calls, count / calls, f"memray {version('memray')}"
    )
    sys.stdout.write(json.dumps(figures.to_json()) + "\n")


async def measure_allocations(spec_json: dict[str, Any], calls: int) -> ClientAllocations:
    """Run the pass in its own process; a failure is one line (UsageError's text)."""
    from grpcbench.base.processes import start_python_module

    child = await start_python_module("grpcbench.load.allocations")
    assert child.process.stdin is not None and child.process.stdout is not None
    try:
        child.process.stdin.write(json.dumps({"spec": spec_json, "calls": calls}).encode() + b"\n")
        await child.process.stdin.drain()
        child.process.stdin.close()
        line = await asyncio.wait_for(child.process.stdout.readline(), PASS_TIMEOUT_S)
    except TimeoutError:
        raise UsageError("--client-allocations: the traced calls took over 10 minutes") from None
    finally:
        code = await child.stop()
    if not line:
        tail = child.stderr_tail(3)
        raise UsageError(f"--client-allocations: the traced pass failed (exit {code}): {tail}")
    return ClientAllocations.from_json(json.loads(line))


if __name__ == "__main__":
    main()
