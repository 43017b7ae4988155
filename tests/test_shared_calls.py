"""Work stealing for a -n budget: generators take calls from a shared pool as they run."""

from __future__ import annotations

import asyncio

from grpcbench.load.closed_loop import Budget, closed_loop_phase
from grpcbench.load.recorders import LevelRecorders
from grpcbench.load.shared_calls import SharedCalls, pool_plan
from tests.support.factories import make_spec


def test_the_pool_plan_keeps_the_total_exact() -> None:
    own, chunks = pool_plan([150, 151])
    assert own == [19, 19]  # a chunk each: an eighth of an even share
    assert sum(own) + sum(chunks) == 301
    assert len(chunks) == 14 and set(chunks[:-1]) == {19}
    assert pool_plan([1, 1]) == ([1, 1], [])  # nothing worth pooling
    own, chunks = pool_plan([1, 0])
    assert sum(own) + sum(chunks) == 1


class MemoryPool:
    """The cluster's Dask queue, in memory: chunks, then a 0 per generator; each claim
    takes a little while, as a scheduler round trip does."""

    def __init__(self, chunks: list[int], generators: int) -> None:
        self.items = [*chunks, *[0] * generators]
        self.claims = 0

    async def claim(self) -> int:
        self.claims += 1
        await asyncio.sleep(0.002)
        return self.items.pop(0)


async def _generator(
    own: int, pool: MemoryPool | None, chunk: int, gate: asyncio.Event | None = None
) -> int:
    """One generator with one user: its calls. With a ``gate``, its first call waits
    for it: a generator that stalls (a slow or busy worker) while another runs."""
    started = False

    async def call(timeout: float) -> None:
        nonlocal started
        if gate is not None and not started:
            started = True
            await gate.wait()
        await asyncio.sleep(0)

    spec = make_spec(target="127.0.0.1:1", service="hello", concurrency=1, requests=own)
    shared = SharedCalls(pool.claim, chunk) if pool else None
    budget = Budget.for_phase(own, 0.0, 60.0, shared=shared)
    recorders = LevelRecorders()
    await closed_loop_phase(call, spec, budget, recorders, None)  # type: ignore[arg-type]
    return sum(recorders.statuses.values())


async def _level(pooled: bool) -> list[int]:
    """A running and a stalled generator sharing 240 calls: the calls each made. The
    stalled one resumes once the running one has finished, so the split depends only
    on who claimed what, never on how fast a busy machine ran either of them."""
    gate = asyncio.Event()

    async def running(own: int, pool: MemoryPool | None, chunk: int) -> int:
        try:
            return await _generator(own, pool, chunk)
        finally:
            gate.set()

    if pooled:
        own, chunks = pool_plan([120, 120])
        pool = MemoryPool(chunks, 2)
        runs = [running(own[0], pool, chunks[0]), _generator(own[1], pool, chunks[0], gate)]
    else:
        runs = [running(120, None, 0), _generator(120, None, 0, gate)]
    return list(await asyncio.gather(*runs))


def test_a_fast_generator_takes_what_a_slow_one_has_not_started() -> None:
    even = asyncio.run(_level(pooled=False))
    shared = asyncio.run(_level(pooled=True))
    assert sum(even) == sum(shared) == 240  # exactly -n, either way
    assert even == [120, 120]  # split evenly, the stalled one still owes its half
    own, chunks = pool_plan([120, 120])
    # Shared, the running one took every pooled chunk but one; the stalled one made
    # the chunk it started with and the one it claimed ahead of need (a claim goes
    # out when a chunk or less is left, so the next chunk is there in time).
    stalled = own[1] + chunks[0]
    assert shared == [240 - stalled, stalled] and stalled < 240 / 4


def test_coroutine_users_wait_for_a_claim_and_end_when_the_pool_is_empty() -> None:
    """Ten users, one call of their own: they all wait on the same claim, share its
    chunk, and end together when the pool says no more."""

    async def level() -> tuple[int, int]:
        pool = MemoryPool([5, 5, 5], 1)

        async def call(timeout: float) -> None:
            await asyncio.sleep(0.001)

        spec = make_spec(target="127.0.0.1:1", service="hello", concurrency=10, requests=1)
        budget = Budget.for_phase(1, 0.0, 30.0, shared=SharedCalls(pool.claim, 5))
        recorders = LevelRecorders()
        await asyncio.wait_for(closed_loop_phase(call, spec, budget, recorders, None), 10)  # type: ignore[arg-type]
        assert budget.exhausted and not budget.truncated and budget.parked == 0
        return sum(recorders.statuses.values()), pool.claims

    calls, claims = asyncio.run(level())
    assert calls == 16 and claims == 4  # 1 + three chunks of 5; the fourth claim: "no more"
