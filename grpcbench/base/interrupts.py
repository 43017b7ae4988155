"""Ctrl-C, SIGTERM, SIGHUP and SIGQUIT mean the same thing: stop every child, keep what
was measured.

SIGTERM, SIGHUP (the terminal closed, an ssh session dropped) and SIGQUIT (Ctrl-\\)
are turned into SIGINT, so one path (asyncio's cancellation of the run, or
``KeyboardInterrupt`` outside it) handles them all; the exit code still says which
signal it was (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, 131 for SIGQUIT).
While a run stops (``run_until_interrupted``), a second signal is ignored: the stop
of every child and the saving of what was measured are not cut short.
"""

from __future__ import annotations

import signal
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_HUNG_UP = 129  # 128 + SIGHUP
EXIT_QUIT = 131  # 128 + SIGQUIT
# Signals other than SIGINT that stop a run as Ctrl-C does, and their exit codes.
_AS_INTERRUPT = {
    getattr(signal, name): code
    for name, code in (("SIGTERM", EXIT_TERMINATED), ("SIGHUP", EXIT_HUNG_UP),
                       ("SIGQUIT", EXIT_QUIT))
    if hasattr(signal, name)
}  # fmt: skip

_received: int | None = None  # the first signal that was not SIGINT itself


def _as_interrupt(signum: int, frame: FrameType | None) -> None:
    global _received
    if _received is None:
        _received = signum
    signal.raise_signal(signal.SIGINT)


def install() -> None:
    """At start-up, before any child exists. A shell starts background jobs with SIGINT
    ignored; restore it so that SIGINT always stops the run and keeps its results."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in _AS_INTERRUPT:
        signal.signal(sig, _as_interrupt)


def exit_code() -> int:
    """The exit code of an interrupted run: 128 + the signal (130 after SIGINT)."""
    if _received is None:
        return EXIT_INTERRUPTED
    return _AS_INTERRUPT.get(_received, EXIT_INTERRUPTED)


STOP_SIGNALS = (signal.SIGINT, *_AS_INTERRUPT)


def run_until_interrupted(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``; the first stop signal cancels it (its ``finally`` blocks stop
    the children and save), and ``KeyboardInterrupt`` is raised as after a plain
    Ctrl-C, also when ``main`` ends in an error rather than cancelled. Later stop
    signals are ignored from then on: the process is ending, and
    what it still does is print and write what was measured."""
    import asyncio  # here: every command installs the handlers, few run an event loop

    interrupted = False

    async def guarded() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def on_signal(signum: int, frame: FrameType | None) -> None:
            nonlocal interrupted
            global _received
            if interrupted:
                return  # stopping already: let it finish
            interrupted = True
            if signum != signal.SIGINT and _received is None:
                _received = signum
            loop.call_soon_threadsafe(task.cancel)

        previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
        try:
            return await main
        finally:
            if not interrupted:  # a stop signal from now on is plain Ctrl-C again
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    try:
        return asyncio.run(guarded())
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    except Exception:
        # After a stop signal, an error is what stopping caused (a starting child the
        # terminal's Ctrl-\ reached first, a level cut short): the run was interrupted.
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        if interrupted:  # the tables and files are still to be written: ignore more
            for sig in STOP_SIGNALS:
                signal.signal(sig, signal.SIG_IGN)


class HeldSignal:
    """The stop signal that came while what was measured was written (None: none)."""

    signum: int | None = None


@contextmanager
def held_while_writing() -> Iterator[HeldSignal]:
    """After a run, its tables and files are written whatever signal comes: a stop
    signal then is held, not acted on (a report cut short would be lost), and the
    caller exits with its code once everything is written (``exit_code``)."""
    held = HeldSignal()

    def hold(signum: int, frame: FrameType | None) -> None:
        global _received
        if held.signum is None:
            held.signum = signum
        if signum != signal.SIGINT and _received is None:
            _received = signum

    previous = {sig: signal.signal(sig, hold) for sig in STOP_SIGNALS}
    try:
        yield held
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
