"""Run a coroutine on asyncio or uvloop, and wait for SIGTERM inside it."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any


def run(main: Coroutine[Any, Any, None], use_uvloop: bool) -> None:
    if use_uvloop:
        import uvloop

        uvloop.run(main)
    else:
        asyncio.run(main)


def sigterm_event() -> asyncio.Event:
    """An event set on SIGTERM; must be called from inside the running loop."""
    event = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, event.set)
    return event
