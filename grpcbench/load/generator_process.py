"""One generator process (``python -m grpcbench.load.generator``), kept for the next level.

Starting a generator costs about 0.3 s of CPU before its first call (imports: the
engine, grpc, the service, the models), and the default run has 24 levels. So a
process that ended its level with a result waits for the next job on stdin, and a
driver keeps one per generator slot for the whole run; the run starts them as it
begins (``BuiltinDriver.warm``), so that their imports pass while its servers
start. Its events come over a pipe of its own (pyperf's ``--pipe``), so whatever a
workload prints or logs cannot corrupt them. A process that failed, or whose level
was cancelled, is stopped, never reused; closing its stdin (``close``) lets an idle
one exit, and it dies with its parent anyway (``child_setup.die_with_parent``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable
from typing import Any

from grpcbench.base.errors import DriverError
from grpcbench.base.processes import Child, start_python_module
from grpcbench.model.load_result import GeneratorJob, LoadResult


class GeneratorError(DriverError):
    """A generator process failed; the level has no result."""


class GeneratorProcess:
    """A started generator and its event pipe; ``run`` one job at a time."""

    def __init__(self, child: Child, events: asyncio.StreamReader, pipe: Any) -> None:
        self.child = child
        self.events = events
        self.pipe = pipe
        self.loop = asyncio.get_running_loop()  # its pipes work on this loop only
        self.jobs = 0  # run so far (tests check that levels share a process)

    @classmethod
    async def start(cls) -> GeneratorProcess:
        read_fd, write_fd = os.pipe()
        try:
            child = await start_python_module(
                "grpcbench.load.generator", ["--pipe", str(write_fd)],
                pass_fds=(write_fd,), quiet_stdout=True,
            )  # fmt: skip
        finally:
            os.close(write_fd)
        try:
            events, pipe = await _pipe_reader(read_fd)
        except BaseException:  # cancelled (the run ended before its first level)
            with contextlib.suppress(ProcessLookupError):
                await child.stop()
            raise
        return cls(child, events, pipe)

    @property
    def pid(self) -> int:
        return self.child.pid

    @property
    def reusable(self) -> bool:
        """Alive, idle, and on the running loop (a driver run again under another
        loop starts afresh)."""
        return (
            self.child.process.returncode is None
            and not self.pipe.is_closing()
            and asyncio.get_running_loop() is self.loop
        )

    async def run(
        self, spec: GeneratorJob, on_event: Callable[[dict[str, Any]], None]
    ) -> LoadResult:
        """One level's share: its result, or GeneratorError (the process is then stopped).
        Cancelled (Ctrl-C, a failed level), the process is stopped too: it may be mid-call."""
        kept = False
        try:
            result = await self._run(spec, on_event)
            kept = True
            return result
        finally:
            if not kept:
                await self.stop()

    async def _run(
        self, spec: GeneratorJob, on_event: Callable[[dict[str, Any]], None]
    ) -> LoadResult:
        process = self.child.process
        assert process.stdin
        self.jobs += 1
        try:
            process.stdin.write((json.dumps(spec.to_json()) + "\n").encode())
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # it exited before reading its job: its exit code and stderr say why
        async for raw in self.events:
            event = json.loads(raw)
            if event["event"] == "result":
                return LoadResult.from_json(event["result"])
            if event["event"] == "error":
                raise GeneratorError(event["message"])
            on_event(event)
        await process.wait()
        tail = self.child.stderr_tail()
        raise GeneratorError(
            f"load generator exited with code {process.returncode} without a result"
            + (f":\n{tail}" if tail else "")
        )

    async def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            await self.child.stop()
        self.pipe.close()

    def close(self) -> None:
        """No more jobs: an idle generator reads the end of its stdin and exits (one
        whose loop is gone is killed: nothing can reap it there)."""
        if self.loop.is_closed():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            return
        stdin = self.child.process.stdin
        if stdin is not None:
            with contextlib.suppress(RuntimeError, OSError):
                stdin.close()
        self.pipe.close()


async def _pipe_reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    """An asyncio reader of a pipe's read end, and its transport (to close)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)  # a result line carries encoded histograms
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    return reader, transport
