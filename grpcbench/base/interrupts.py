"""Ctrl-C, SIGTERM and SIGHUP mean the same thing: stop every child, keep what was measured.

SIGTERM and SIGHUP (the terminal closed, an ssh session dropped) are turned
into SIGINT, so one path (asyncio's cancellation of the run, or
``KeyboardInterrupt`` outside it) handles them all; the exit code still says which
signal it was (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
"""

from __future__ import annotations

import signal
from types import FrameType

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_HUNG_UP = 129  # 128 + SIGHUP

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
    signal.signal(signal.SIGTERM, _as_interrupt)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, _as_interrupt)


def exit_code() -> int:
    """The exit code of an interrupted run: 143 after SIGTERM, 129 after SIGHUP, else 130."""
    if _received == signal.SIGTERM:
        return EXIT_TERMINATED
    if _received is not None and _received == getattr(signal, "SIGHUP", None):
        return EXIT_HUNG_UP
    return EXIT_INTERRUPTED
