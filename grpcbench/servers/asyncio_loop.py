"""Run a coroutine on asyncio or uvloop, and wait for SIGTERM inside it."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T], use_uvloop: bool) -> T:
    """Servers with ``+uvloop``, and load generators (``--client-loop``), run on uvloop."""
    if use_uvloop:
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)


def sigterm_event() -> asyncio.Event:
    """An event set on SIGTERM; must be called from inside the running loop."""
    event = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, event.set)
    return event
