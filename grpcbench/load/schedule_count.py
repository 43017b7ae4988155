"""What a timed open loop's pacer scheduled, per half of its window."""

from __future__ import annotations

from collections.abc import Iterator


class ScheduleCount:
    """How many calls a timed open loop's pacer scheduled before its middle and
    before its end, draw by draw: a Poisson pacer's halves vary by about
    1/sqrt(n) (24 +- 5 calls in the half second of a 24/s probe), so what the server
    completed in the second half is compared with what was scheduled there, not with
    the window's average (capacity.probe.offered_rate)."""

    def __init__(self, duration_s: float) -> None:
        self.middle = duration_s / 2
        self.end = duration_s
        self.before_middle = 0
        self.before_end = 0
        self._offsets: Iterator[float] = iter(())
        self._last = 0.0

    def counting(self, offsets: Iterator[float]) -> Iterator[float]:
        self._offsets = offsets
        return self._count()

    def _count(self) -> Iterator[float]:
        for offset in self._offsets:
            self._note(offset)
            yield offset

    def _note(self, offset: float) -> None:
        self._last = offset
        if offset < self.end:
            self.before_end += 1
            if offset < self.middle:
                self.before_middle += 1

    def drain(self) -> None:
        """Count the rest of the pacer's send times up to its end (a phase that stopped drawing
        early, its slots full, still had those calls scheduled)."""
        while self._last < self.end:
            offset = next(self._offsets, None)
            if offset is None:
                return
            self._note(offset)
