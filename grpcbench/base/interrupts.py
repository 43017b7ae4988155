"""Ctrl-C and SIGTERM mean the same thing: stop every child, keep what was measured.

SIGTERM is turned into SIGINT, so one path (asyncio's cancellation of the run,
or ``KeyboardInterrupt`` outside it) handles both; the exit code still says
which signal it was (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import signal
from types import FrameType

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM

_terminated = False


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    global _terminated
    _terminated = True
    signal.raise_signal(signal.SIGINT)


def install() -> None:
    """At start-up, before any child exists. A shell starts background jobs with SIGINT
    ignored; restore it so that SIGINT always stops the run and keeps its results."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _on_sigterm)


def exit_code() -> int:
    """The exit code of an interrupted run: 143 after SIGTERM, else 130."""
    return EXIT_TERMINATED if _terminated else EXIT_INTERRUPTED
