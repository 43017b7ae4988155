"""A level's intervals from several generators (Dask workers), merged as they arrive.

Each worker cuts its intervals on the level's common clock (the barrier starts
them together), so interval N of every worker covers the same seconds. The live
view must show each interval once, whole: it is released when every share has
sent it, or when a later interval of every share has come (a share that had
nothing to say for it, or whose message was lost, does not hold the view back).
"""

from __future__ import annotations

from grpcbench.model.intervals import IntervalFigures


class IntervalMerger:
    """Collects ``(share, figures)``; ``ready()`` returns the intervals now whole, in order."""

    def __init__(self, shares: int) -> None:
        self.shares = shares
        self.pending: dict[int, IntervalFigures] = {}
        self.reported: dict[int, set[int]] = {}
        self.latest: dict[int, int] = {}  # share -> the highest index it sent
        self.released = -1  # every index up to this one has been given out

    def add(self, share: int, figures: IntervalFigures) -> None:
        if figures.index <= self.released:
            return  # too late: that second was shown without it
        mine = self.pending.get(figures.index)
        self.pending[figures.index] = mine.merge(figures) if mine else figures
        self.reported.setdefault(figures.index, set()).add(share)
        self.latest[share] = max(self.latest.get(share, -1), figures.index)

    def ready(self) -> list[IntervalFigures]:
        whole: list[IntervalFigures] = []
        everyone_past = min(self.latest.values()) if len(self.latest) == self.shares else -1
        for index in sorted(self.pending):
            if len(self.reported[index]) < self.shares and index >= everyone_past:
                break
            whole.append(self.pending.pop(index))
            del self.reported[index]
            self.released = index
        return whole
