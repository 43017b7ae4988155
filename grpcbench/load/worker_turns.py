"""Which worker makes each call of an open loop, and how many calls may be in flight.

An open loop's calls go to its workers in turn: the level's ``concurrency``
workers (ghz's --rps workers, ``{{.WorkerID}}``), or, under ghz's concurrency
schedule (``model.ghz_workers``), the workers working at the call's intended send
time. The same workers cap the calls in flight: a worker waits for its reply.
"""

from __future__ import annotations

from collections.abc import Iterator

from grpcbench.model.ghz_workers import GhzWorkers, WorkerWindow


class WorkerTurns:
    """``turn(t)``: the worker of the next call, intended ``t`` s after the phase's
    start (times only grow); ``limit``: the calls in flight allowed since that turn."""

    def __init__(self, concurrency: int, schedule: GhzWorkers | None = None) -> None:
        self.cap = max(1, concurrency)
        self.limit = self.cap
        self._turns = 0
        self._first = 0
        self._count = self.cap
        self._windows: Iterator[WorkerWindow] | None = None
        self._next: WorkerWindow | None = None
        if schedule is not None:
            self._windows = schedule.windows()
            self._next = next(self._windows)
            self._advance(0.0)

    def _advance(self, t: float) -> None:
        while self._next is not None and self._next.since_s <= t:
            window = self._next
            self._first, self._count = window.first, window.count
            self.limit = min(self.cap, window.count)
            assert self._windows is not None
            self._next = next(self._windows, None)

    @property
    def next_change_s(self) -> float | None:
        """When the working workers change next (None: never)."""
        return self._next.since_s if self._next is not None else None

    def turn(self, t: float) -> int:
        """The worker (its number) to make the call intended at ``t``."""
        if self._windows is not None:
            self._advance(t)
        worker = self._first + self._turns % max(1, self._count)
        self._turns += 1
        return worker

    def waits(self, t: float, in_flight: int) -> bool:
        """Whether a call intended at ``t`` must wait: every working worker waits for
        a reply (none working: ghz's schedule started at 0 workers)."""
        if self._windows is not None:
            self._advance(t)
        return in_flight >= self.limit or self._count <= 0
