"""Async helpers for child processes: start with the right environment, stop for sure.

Every child grpcbench starts goes through ``start_child`` and is stopped by
``stop_child`` in a ``finally``; together with PR_SET_PDEATHSIG in the child
this is what guarantees no child outlives a run, a failed run or Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Sequence
from typing import IO

from grpcbench.childproc import child_environment

STOP_TIMEOUT_S = 5.0


class Child:
    """A running child process whose stderr goes to a temporary file (never blocks).

    The file stays readable after ``stop()`` (for error messages) and is
    deleted when the ``Child`` is garbage-collected."""

    def __init__(self, process: asyncio.subprocess.Process, stderr_file: IO[bytes]) -> None:
        self.process = process
        self._stderr_file = stderr_file

    @property
    def pid(self) -> int:
        return self.process.pid

    def stderr_tail(self, lines: int = 8) -> str:
        self._stderr_file.flush()
        self._stderr_file.seek(0)
        text = self._stderr_file.read().decode(errors="replace")
        tail = [line for line in text.splitlines() if line.strip()][-lines:]
        return "\n".join(tail)

    async def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal, wait up to STOP_TIMEOUT_S, then SIGKILL; returns the exit code."""
        process = self.process
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)
            try:
                await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
            except (TimeoutError, asyncio.CancelledError):
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await asyncio.shield(process.wait())
        return process.returncode if process.returncode is not None else -1


async def start_python_module(module: str, args: Sequence[str] = ()) -> Child:
    return await start_child([sys.executable, "-m", module, *args])


async def start_child(argv: Sequence[str], cpus: Sequence[int] = ()) -> Child:
    """Start ``argv``; with ``cpus``, pinned before exec (for programs that are not
    ours, such as ghz, which cannot pin themselves; every thread inherits it)."""
    stderr_file = tempfile.TemporaryFile()  # noqa: SIM115 - owned by Child, closed in stop()
    pin = (lambda: os.sched_setaffinity(0, set(cpus))) if cpus else None
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr_file,
        env=child_environment(),
        cwd=os.getcwd(),
        preexec_fn=pin,
    )
    return Child(process, stderr_file)
