"""A traffic mix: several methods in one level, each with its weight, data and timeout.

Which method each call runs follows smooth weighted round-robin (nginx's): over
every ``sum(weights)`` calls each method runs exactly its weight, spread as evenly
as the weights allow (8:1:1 runs A A A A B A A A A C, or close), with no random draw
per call. Each connection keeps its own order, so each connection carries the mix
in its proportions, exact to within one call per method at any moment; a level over
N connections (in any number of processes) is exact to within N calls per method. The
weights are reduced by their greatest common divisor first (1000:10 is 100:1), and a
period longer than ``CYCLE_KEPT`` calls is generated call by call, never built
(10000000:1 took 17.6 s and 130 MB to start). ``--mix-order random`` draws each
call's method by weight instead (Locust's task choice): the proportions then hold
only on average, as a binomial count does.

Per-method figures are recorded by the loops themselves, with the level's own
latency (from the intended send in an open loop): the call function marks which
method the current task is calling (``CURRENT_PART``), and the callback loops
carry it on the stream. Each connection keeps its own order (``bind``), so each one
carries the whole mix, not the methods its turn in a shared order gave it.
"""

from __future__ import annotations

import bisect
import contextvars
import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from grpcbench.contract.calls import CallFunction, CallStats, UnaryPlan
from grpcbench.rpc.call import MethodCall
from grpcbench.rpc.templates import WorkerIds
from grpcbench.rpc.workload import MethodWorkload

if TYPE_CHECKING:
    import grpc

# Which of a mix's methods the current task (a virtual user, or one open-loop call)
# is calling: read by the recorders when the call ends.
CURRENT_PART: contextvars.ContextVar[int] = contextvars.ContextVar("part", default=0)


# A reduced period up to this many calls is built once and repeated.
CYCLE_KEPT = 10_000


def weighted_order(weights: Sequence[int], random_order: bool = False) -> Iterator[int]:
    """Which method each call runs, forever: smooth weighted round-robin over the
    weights reduced by their gcd; a short period built once, a long one generated.
    ``random_order`` (--mix-order random): each call draws its method by weight, from a
    generator seeded apart for each order (each connection)."""
    if random_order:
        return _drawn(weights, random.Random())
    divisor = math.gcd(*weights)
    reduced = [weight // divisor for weight in weights]
    if sum(reduced) <= CYCLE_KEPT:
        return itertools.cycle(weighted_cycle(reduced))
    return _generated(reduced)


def _generated(weights: Sequence[int]) -> Iterator[int]:
    """Smooth weighted round-robin, one call at a time, in constant memory."""
    total = sum(weights)
    current = [0] * len(weights)
    indices = range(len(weights))
    while True:
        for index, weight in enumerate(weights):
            current[index] += weight
        chosen = max(indices, key=current.__getitem__)
        current[chosen] -= total
        yield chosen


def _drawn(weights: Sequence[int], rng: random.Random) -> Iterator[int]:
    """Independent draws by weight (Locust's task choice): proportions only on average."""
    bounds = list(itertools.accumulate(weights))
    total = bounds[-1]
    while True:
        yield bisect.bisect_right(bounds, rng.random() * total)


def weighted_cycle(weights: Sequence[int]) -> tuple[int, ...]:
    """One period of smooth weighted round-robin: ``sum(weights)`` indices, each
    ``i`` exactly ``weights[i]`` times, interleaved."""
    return tuple(itertools.islice(_generated(weights), sum(weights)))


class MixWorkload:
    """The mix's methods as one workload: each call runs the cycle's next method."""

    def __init__(
        self, call: MethodCall, index: int = 0, count: int = 1, worker_ids: WorkerIds | None = None
    ) -> None:
        self.parts = [MethodWorkload(part, index, count, worker_ids) for part in call.mix]
        self.timeouts = [part.timeout_s for part in call.mix]
        self.weights = tuple(part.weight for part in call.mix)
        self.random_order = call.mix_order == "random"
        # Shared: ``bind_sharing_order``.
        self.order = weighted_order(self.weights, self.random_order)

    def as_preflight(self, number: int) -> None:
        for part in self.parts:
            part.as_preflight(number)

    def unary_plan(self) -> UnaryPlan | None:
        """Every method unary, or a stream with fixed, unpaced requests: the callback
        loops run the mix, choosing per call."""
        plans = [part.unary_plan() or part.stream_plan() for part in self.parts]
        if any(plan is None for plan in plans):
            return None
        unary = tuple(plan for plan in plans if plan is not None)
        timed = tuple(
            replace(plan, timeout_s=timeout_s)
            for plan, timeout_s in zip(unary, self.timeouts, strict=True)
        )
        return UnaryPlan(timed[0].path, parts=timed, weights=self.weights,
                         random_order=self.random_order)  # fmt: skip

    def bind(self, channel: grpc.aio.Channel) -> CallFunction:
        """The mix's calls on one connection, in an order of their own: each connection
        carries the whole mix in its proportions (a balancer per connection, such as a
        Kubernetes Service, then sends every pod every method)."""
        return self._bound(channel, weighted_order(self.weights, self.random_order))

    def bind_sharing_order(self, channel: grpc.aio.Channel) -> CallFunction:
        """As ``bind``, in the one order all such bindings share: for a connection per
        call (``--connections per-request``), where an order per binding would run
        every call as the mix's first method."""
        return self._bound(channel, self.order)

    def _bound(self, channel: grpc.aio.Channel, order: Iterator[int]) -> CallFunction:
        calls = [part.bind(channel) for part in self.parts]
        timeouts = self.timeouts

        async def call(timeout: float) -> Any:
            part = next(order)
            CURRENT_PART.set(part)
            stats: CallStats | None = await calls[part](timeouts[part] or timeout)
            return stats

        return call
