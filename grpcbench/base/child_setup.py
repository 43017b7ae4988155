"""Set-up shared by every child process grpcbench starts (servers, generators, backing services).

Children must never outlive the runner, and Ctrl-C must be handled in one place
(the runner), so each child:
- asks the kernel to send it SIGTERM when its parent dies (Linux PR_SET_PDEATHSIG),
- ignores SIGINT and SIGQUIT (the terminal sends them to the whole process group;
  the runner then stops the children itself, in order, and keeps their results),
- pins itself to the CPUs it was given before it starts any thread, so every
  thread it creates inherits the affinity.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
# Every child of ours that serves something (gRPC servers, the embedded S3 and
# MongoDB) prints one line `READY {"port": N}` on stdout once it listens
# (PostgreSQL, not ours, is given its port and waited for on it).
READY_PREFIX = "READY "
# Directories the parent appended to sys.path for users' modules (services.registry).
USER_PATH_ENV = "GRPCBENCH_USER_PATH"


def announce_ready(port: int) -> None:
    sys.stdout.write(READY_PREFIX + json.dumps({"port": port}) + "\n")
    sys.stdout.flush()


def parse_ready_line(line: bytes) -> int | None:
    """The port of a READY line, or None for any other line."""
    if not line.startswith(READY_PREFIX.encode()):
        return None
    try:
        return int(json.loads(line[len(READY_PREFIX) :])["port"])
    except (ValueError, KeyError, TypeError):
        return None


def set_parent_death_signal() -> bool:
    """Ask Linux to send us SIGTERM when our parent dies (kept across ``exec``,
    which is how programs that are not ours get it: ``childexec``). False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return False
    return True


def adopt_orphans() -> None:
    """Be the reaper of this process's orphaned descendants (Linux's child subreaper).

    User code that daemonizes (fork, ``setsid``, fork again, and the middle process
    exits) leaves a process whose parent is gone; the kernel gives it to init, out of
    reach of every stop. With this, it becomes our child instead, where the stops that
    look for descendants (``stop_forked_copies``, ``Child.stop``) find it."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def die_with_parent() -> None:
    """The parent-death signal, and exit now if the parent already died."""
    if not set_parent_death_signal():
        return
    # The parent may have died between fork and prctl: then we were re-parented.
    parent = os.environ.get("GRPCBENCH_PARENT_PID")
    if parent and int(parent) != os.getppid():
        os._exit(1)


def setup_child(cpus: Sequence[int] | None) -> None:
    die_with_parent()
    adopt_orphans()
    # Users' modules (``--service mymodule:SERVICE`` from the current directory):
    # appended to sys.path, after every installed package (see services.registry).
    for directory in os.environ.get(USER_PATH_ENV, "").split(os.pathsep):
        if directory and directory not in sys.path:
            sys.path.append(directory)
    ignore_terminal_signals()
    pin_to(cpus or ())


# Ctrl-C and Ctrl-\ reach a terminal's whole process group: grpcbench stops its
# children itself (and keeps what was measured), so the children do not act on them.
TERMINAL_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGQUIT") if hasattr(signal, name)
)


def ignore_terminal_signals() -> None:
    for sig in TERMINAL_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def pin_to(cpus: Iterable[int]) -> None:
    """Run on these CPUs (none: leave as is); threads started afterwards inherit it."""
    wanted = set(cpus)
    if wanted and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, wanted)


@contextmanager
def process_pinned(cpus: Iterable[int]) -> Iterator[None]:
    """This whole process on ``cpus`` (none: as it is) within the block: each of its
    threads, and so what they start; each thread's own CPUs again after it (threads
    started within keep them: they belong to the block's work)."""
    wanted = set(cpus)
    if not wanted or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before: dict[int, set[int]] = {}
    for thread in _threads():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            before[thread] = os.sched_getaffinity(thread)
            os.sched_setaffinity(thread, wanted)
    try:
        yield
    finally:
        for thread, was in before.items():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(thread, was)


def _threads() -> list[int]:
    """The ids of this process's threads (Linux; elsewhere the calling thread's, 0)."""
    try:
        return [int(name) for name in os.listdir("/proc/self/task")]
    except OSError:
        return [0]


def child_environment() -> dict[str, str]:
    """Environment for a child: ours plus our pid, for the re-parenting check."""
    env = dict(os.environ)
    env["GRPCBENCH_PARENT_PID"] = str(os.getpid())
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env
