"""A run's end reaps the children it started, on its own loop, and no other.

A child reaped after its loop closed makes asyncio print lines that are not ours
("Loop ... that handles pid N is closed", a RuntimeError from a transport's
``__del__``), so the runner awaits ``reap_all`` before its loop ends."""

from __future__ import annotations

import asyncio
import gc

from grpcbench.base.processes import children_mark, reap_all, start_child

SLEEPER = ["sleep", "60"]


def test_only_children_started_after_the_mark_are_reaped() -> None:
    async def scenario() -> tuple[int | None, int | None, int | None]:
        before = await start_child(SLEEPER)  # a pytest session's server, say
        mark = children_mark()
        stuck = await start_child(SLEEPER)  # does not exit when asked: killed
        quick = await start_child(["true"])  # already gone: only reaped
        await reap_all(after=mark, timeout_s=0.5)
        codes = (before.process.returncode, stuck.process.returncode, quick.process.returncode)
        await before.stop()
        return codes

    before_code, stuck_code, quick_code = asyncio.run(scenario())
    assert before_code is None  # left alone
    assert stuck_code is not None and stuck_code != 0  # killed after the timeout
    assert quick_code is not None


def test_a_mark_taken_after_gc_still_orders_children() -> None:
    """Serials, not ids: a collected child's id may be reused by a newer one, which
    must still count as started after the mark."""

    async def scenario() -> int | None:
        first = await start_child(["true"])
        await first.process.wait()
        mark = children_mark()
        del first
        gc.collect()
        later = await start_child(SLEEPER)
        await reap_all(after=mark, timeout_s=0.2)
        return later.process.returncode

    assert asyncio.run(scenario()) is not None
