"""The one launcher of child processes: start with the right environment, stop for sure.

Every child grpcbench starts goes through here: servers, load generators and
ghz (async, ``start_child``), and the backing services of a run's preparation
(sync, ``ready_process``). Each is stopped in a ``finally`` (``Child.stop`` or
the end of ``ready_process``); with PR_SET_PDEATHSIG in the child this is what
guarantees no child outlives a run, a failed run or Ctrl-C. Children that
serve something announce their port with one ``READY {"port": N}`` line
(``childproc.announce_ready``). Python children start with ``-P``, so a file
in the current directory named like a dependency cannot shadow it. Our own
Python modules set themselves up as they start (``childproc.setup_child``);
every other program starts behind ``childexec``, which does it for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import IO, Any, NoReturn, Protocol

from grpcbench.base.child_setup import child_environment, parse_ready_line
from grpcbench.base.errors import UsageError
from grpcbench.base.foreign_child import launcher_argv

STOP_TIMEOUT_S = 5.0


class Supervisor(Protocol):
    """What starts backing services for a run (``preparation.Preparation``): where they
    run, what an interrupt must kill, and which ones every level measures."""

    backing_cpus: tuple[int, ...]

    def checkpoint(self) -> None: ...

    def tracked(
        self, process: subprocess.Popen[bytes]
    ) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]: ...

    def register(self, name: str, pid: int, gil: bool) -> Callable[[], None]: ...


BACKING_READY_TIMEOUT_S = 60.0


def python_argv(module: str, args: Sequence[str] = ()) -> list[str]:
    """``python -P -m module args``: -P keeps the current directory off ``sys.path``."""
    return [sys.executable, "-P", "-m", module, *args]


def _tail(stderr_file: IO[bytes], lines: int = 8) -> str:
    stderr_file.flush()
    stderr_file.seek(0)
    text = stderr_file.read().decode(errors="replace")
    return "\n".join([line for line in text.splitlines() if line.strip()][-lines:])


class Child:
    """A running child process whose stderr goes to a temporary file (never blocks).

    The file stays readable after ``stop()`` (for error messages) and is
    deleted when the ``Child`` is garbage-collected."""

    def __init__(self, process: asyncio.subprocess.Process, stderr_file: IO[bytes]) -> None:
        self.process = process
        self._stderr_file = stderr_file
        self.loop = asyncio.get_running_loop()  # the loop that must reap it
        self.serial = next(_SERIALS)
        _STARTED[self.serial] = self

    @property
    def pid(self) -> int:
        return self.process.pid

    def stderr_tail(self, lines: int = 8) -> str:
        return _tail(self._stderr_file, lines)

    async def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal, wait up to STOP_TIMEOUT_S, then SIGKILL; returns the exit code.

        Cancelled while waiting (Ctrl-C during a stop), it still kills and reaps
        the child, then lets the cancellation go on: a stop never swallows it."""
        process = self.process
        descendants = _descendants(process.pid)  # a user's code may have forked
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)
                # A stopped child (SIGSTOP, Ctrl-Z) acts on the signal only once resumed.
                process.send_signal(signal.SIGCONT)
            try:
                await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
            except TimeoutError:
                await self._kill()
            except asyncio.CancelledError:
                await self._kill()
                _kill_all(descendants)
                raise
        _kill_all(descendants)
        _STARTED.pop(self.serial, None)  # reaped: nothing left for ``reap_all``
        return process.returncode if process.returncode is not None else -1

    async def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await asyncio.shield(self.process.wait())


class BackgroundStops:
    """Stops that run while the run goes on. A server kind's stop (SIGTERM, its graceful
    stop, its exit: 40-75 ms) overlaps the next kind's start (about 0.2 s), which
    awaits ``settled`` before it is measured; the run awaits it before it ends.
    Cancelled while settling (Ctrl-C), each stop kills and reaps its child."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[object]] = set()

    def begin(self, stop: Coroutine[Any, Any, object]) -> None:
        task = asyncio.get_running_loop().create_task(stop)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settled(self) -> None:
        """Every stop begun so far has ended (its child exited and was reaped)."""
        while self._tasks:
            ended = await asyncio.gather(*self._tasks, return_exceptions=True)
            for outcome in ended:
                if isinstance(outcome, Exception):
                    raise outcome  # a bug in a stop: not swallowed


# Every Child started and not yet stopped, by serial (its place in the order of starts):
# ``reap_all`` awaits the ones left. Held strongly, so that a child closed and dropped
# by its owner (an idle generator told to exit) is still there to be reaped.
_STARTED: dict[int, Child] = {}
_SERIALS = itertools.count(1)


def children_mark() -> int:
    """The serial of the last child started: ``reap_all(after=mark)`` leaves it and every
    child before it alone."""
    return max(_STARTED, default=0)


async def reap_all(after: int, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """At the end of a run, on its loop: every child started after the mark (one started
    before, say a pytest session's server, is left alone) has exited and been reaped
    (killed after ``timeout_s``), and its pipes are closed. A child reaped after the loop
    closed (a stop cut short by a second cancellation) makes asyncio print "Loop ... that
    handles pid ... is closed" and a RuntimeError from the transport's ``__del__``: lines
    that are not grpcbench's."""
    loop = asyncio.get_running_loop()
    for serial, child in sorted(_STARTED.items()):
        if serial <= after or child.loop is not loop:
            continue  # started before the run, or on another run's loop (a test's)
        process = child.process
        if process.returncode is None:
            try:
                await asyncio.wait_for(asyncio.shield(process.wait()), timeout_s)
            except TimeoutError:
                await child._kill()
        _close_transport(process)
        _STARTED.pop(serial, None)


def _close_transport(process: asyncio.subprocess.Process) -> None:
    """Close an exited child's pipes now, on the live loop. asyncio closes them itself
    only once every pipe has reached its end, and ``Process`` offers no public close
    (its ``_transport`` is the one handle), so this is the one private access."""
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()


def _descendants(pid: int) -> list[Any]:
    """The processes under ``pid``: what a servicer or a flow forked goes with it."""
    import psutil

    try:
        return list(psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return []


def _kill_all(processes: list[Any]) -> None:
    import psutil

    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()


def stop_forked_copies() -> list[int]:
    """Kill this process's descendants that run its own command line, copies that user
    code made with ``os.fork()`` (grpcbench starts children with other command lines);
    their pids."""
    import psutil

    me = psutil.Process()
    try:
        argv = me.cmdline()
        copies = [p for p in me.children(recursive=True) if _cmdline(p) == argv]
    except psutil.Error:
        return []
    _kill_all(copies)
    return [copy.pid for copy in copies]


def _cmdline(process: Any) -> list[str] | None:
    import psutil

    try:
        return list(process.cmdline())
    except psutil.Error:
        return None


async def start_python_module(
    module: str, args: Sequence[str] = (), pass_fds: Sequence[int] = (), quiet_stdout: bool = False
) -> Child:
    """One of our own Python modules: it sets itself up (``childproc.setup_child``).

    ``pass_fds``: descriptors the child inherits (a generator's event pipe);
    ``quiet_stdout``: its stdout goes to the stderr file, so whatever a user's
    code prints there neither blocks it nor reaches our protocol."""
    return await _start(python_argv(module, args), pass_fds, quiet_stdout)


async def start_child(
    argv: Sequence[str], cpus: Sequence[int] = (), pass_fds: Sequence[int] = ()
) -> Child:
    """A program that is not ours (ghz, a Go server); with ``cpus``, pinned before
    it starts (every thread inherits it); ``pass_fds``: descriptors it inherits (its
    secrets, as ``/dev/fd/N``: ``secrets.SecretFiles``)."""
    return await _start(tethered_argv(argv, cpus), pass_fds)


def tethered_argv(argv: Sequence[str], cpus: Sequence[int] = ()) -> list[str]:
    """``argv`` behind ``childexec``, which ties it to our life and pins it.

    Never a ``preexec_fn``: it makes Python fork a process that may run gRPC,
    which can crash the child (see ``childexec``). The program is looked up
    here so that a missing one is still a FileNotFoundError in the caller."""
    program = shutil.which(argv[0])
    if program is None:
        raise FileNotFoundError(errno.ENOENT, "no such program", argv[0])
    return launcher_argv([program, *argv[1:]], tuple(cpus))


async def _start(
    argv: Sequence[str], pass_fds: Sequence[int] = (), quiet_stdout: bool = False
) -> Child:
    stderr_file = tempfile.TemporaryFile()  # noqa: SIM115 - owned by Child
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=stderr_file if quiet_stdout else asyncio.subprocess.PIPE,
        stderr=stderr_file,
        env=child_environment(),
        cwd=os.getcwd(),
        pass_fds=tuple(pass_fds),
    )
    return Child(process, stderr_file)


def _popen(argv: Sequence[str], cpus: Sequence[int], **streams: Any) -> subprocess.Popen[bytes]:
    """A synchronous child with our environment, pinned and tied to our life."""
    return subprocess.Popen(tethered_argv(argv, cpus), env=child_environment(), **streams)


@contextlib.contextmanager
def ready_process(
    name: str,
    argv: Sequence[str],
    supervisor: Supervisor,
    role: str = "",
    gil: bool = True,
    listens_on: int | None = None,
    stop_signal: int = signal.SIGTERM,
) -> Iterator[int]:
    """Run a backing service until the context ends; yields the port of its READY line.

    A program that prints no READY line (PostgreSQL) is given its port and
    ``listens_on`` it: it is ready once 127.0.0.1:port accepts a connection.
    ``stop_signal``: how it is asked to stop (PostgreSQL: SIGINT, its fast shutdown;
    SIGTERM would wait for every client to leave).
    It runs on the supervisor's ``backing_cpus`` and, with a ``role`` ("S3"), is
    registered with it so every level measures it (with its child processes).
    Synchronous on purpose: a run's preparation is synchronous code, run in a
    thread of its own (``preparation``)."""
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below
    process = _popen(
        argv, supervisor.backing_cpus, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=stderr,
    )  # fmt: skip
    unregister: Callable[[], None] | None = None
    try:
        with supervisor.tracked(process):  # an interrupt during preparation kills it
            if listens_on is None:
                port = _wait_ready(name, process, stderr, supervisor.checkpoint)
            else:
                port = _wait_listening(name, process, stderr, supervisor.checkpoint, listens_on)
        if role:
            unregister = supervisor.register(role, process.pid, gil)
        yield port
    finally:
        if unregister is not None:
            unregister()
        if process.poll() is None:
            process.send_signal(stop_signal)
            with contextlib.suppress(OSError):
                process.stdin.close()  # type: ignore[union-attr]
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        stderr.close()


def run_to_completion(
    argv: Sequence[str], cwd: str, timeout_s: float, supervisor: Supervisor
) -> subprocess.CompletedProcess[bytes]:
    """A preparation step (e.g. a Maven fetch): output captured, killed on an interrupt."""
    process = _popen(argv, (), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd)
    with supervisor.tracked(process):
        try:
            output, _ = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
    supervisor.checkpoint()
    return subprocess.CompletedProcess(list(argv), process.returncode, output, b"")


def _wait_listening(
    name: str,
    process: subprocess.Popen[bytes],
    stderr: IO[bytes],
    checkpoint: Callable[[], None],
    port: int,
) -> int:
    deadline = time.monotonic() + BACKING_READY_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        checkpoint()
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return port
        time.sleep(0.05)
    _raise_not_started(name, stderr)


def _raise_not_started(name: str, stderr: IO[bytes]) -> NoReturn:
    tail = _tail(stderr)
    raise UsageError(
        f"the embedded {name} did not start" + (f"; its stderr:\n{tail}" if tail else "")
    )


def _wait_ready(
    name: str,
    process: subprocess.Popen[bytes],
    stderr: IO[bytes],
    checkpoint: Callable[[], None],
) -> int:
    assert process.stdout is not None
    deadline = time.monotonic() + BACKING_READY_TIMEOUT_S
    buffer = b""
    while time.monotonic() < deadline:
        checkpoint()
        readable, _, _ = select.select([process.stdout], [], [], 0.2)
        if readable:
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                break
            buffer += chunk
            for line in buffer.splitlines():
                port = parse_ready_line(line)
                if port is not None:
                    return port
        elif process.poll() is not None:
            break
    _raise_not_started(name, stderr)
