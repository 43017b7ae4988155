"""Where a figure changed over a project's runs, and whether it matters.

Apache Otava's detector (E-divisive means in sliding windows, then Student's t-test
merging, Fleming et al., "Hunter", ICPE 2023) finds the change points of each
series; ``max_pvalue`` is its significance. Two rules of ours follow it:

- **The run's own noise.** A shift no larger than the runs' own uncertainty
  (``series`` gives each value one: the spread over repeats, or the 95% interval
  of a percentile) is not a change, however small the t-test's p-value: a test
  across runs cannot see what each run could not measure.
- **The runs' spread.** A shift must also be ``min_effect`` (3) times the spread from
  run to run on either side of it: the larger of the standard deviation and the MAD
  scaled to one, so neither a few outlying runs nor a tight cluster among scattered
  ones makes it small; one outlying run alone (a blip) is left out of it. On a
  shared machine a few runs in a quieter or busier spell pass a t-test; only a shift
  well beyond how runs scatter is a change.
- **Who limited it.** A change in runs whose verdict is generator-bound is the
  client's, not the server's: it is shown, and ``--fail-on-regression`` ignores it.

A change also says how many runs it rests on (``runs_after``). One that the newest
run starts rests on that run alone, and a run that the machine slowed throughout
looks the same: it is *unconfirmed* until the next run either stays on its far side
(confirmed) or comes back, which leaves one outlying run, not a change. A change
followed at once by another (a step whose boundary run sits between its levels) rests
on one run too, and says so.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.history.database import EXTRA_HINT

DEFAULT_MAX_PVALUE = 0.001
DEFAULT_MIN_EFFECT = 3.0  # a change is at least this many run-to-run deviations
MAD_TO_SIGMA = 1.4826  # the MAD of a normal sample, scaled to its standard deviation
WINDOW = 50  # Otava's default window of runs
TRIM_FROM = 5  # a segment of this many runs or more: its farthest run is not its scatter


@dataclass(frozen=True)
class Point:
    """One run's value of a series."""

    run_id: int
    value: float
    spread: float
    verdict: str


@dataclass(frozen=True)
class ChangePoint:
    series: str
    figure: str
    run_id: int  # the first run after the change
    index: int  # its place in the series
    before: float  # mean of the segment before
    after: float  # mean of the segment after
    p_value: float
    worse: bool
    of_server: bool  # False: the generator limited the runs after it
    host: bool = False  # the control project shares it (history.control)
    control_change: float | None = None  # the control's relative shift, when one was given
    runs_after: int = 2  # the runs from it to the next change Otava found, or the newest

    @property
    def change(self) -> float:
        return self.after / self.before - 1 if self.before else math.inf

    @property
    def confirmed(self) -> bool:
        """More than one run shows it: a single run can be a blip of the machine."""
        return self.runs_after > 1

    def qualifiers(self) -> list[str]:
        """What a reader must know before believing it, as the table and the page say it."""
        said = [] if self.of_server else ["the generator limited these runs: not the server's"]
        if self.control_change is not None:
            said.append(f"the control moved {self.control_change:+.1%}")
        if not self.confirmed:
            said.append(
                "unconfirmed: it rests on one run alone, as a blip of the machine would (at"
                " the newest run, the next run confirms or clears it)"
            )
        return said

    @property
    def kind(self) -> str:
        if self.host:
            return "host"
        return "regression" if self.worse else "improvement"

    def to_json(self) -> dict[str, object]:
        return {
            "run_id": self.run_id, "series": self.series, "figure": self.figure,
            "index": self.index, "before": self.before, "after": self.after,
            "change": self.change, "p_value": self.p_value, "kind": self.kind, "worse": self.worse,
            "of_server": self.of_server, "control_change": self.control_change,
            "runs_after": self.runs_after, "confirmed": self.confirmed,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChangePoint:
        return cls(
            data["series"], data["figure"], int(data["run_id"]), int(data["index"]),
            float(data["before"]), float(data["after"]), float(data["p_value"]),
            bool(data.get("worse", data["kind"] == "regression")),
            bool(data["of_server"]), data["kind"] == "host", data.get("control_change"),
            int(data["runs_after"]),
        )  # fmt: skip


def _detect(values: list[float], max_pvalue: float) -> list[tuple[int, float, float, float]]:
    """(index, mean before, mean after, p-value) of each change Otava finds."""
    try:
        from otava.analysis import compute_change_points
    except ImportError:
        raise UsageError(f"change points need Apache Otava: {EXTRA_HINT}") from None
    found, _ = compute_change_points(values, window_len=WINDOW, max_pvalue=max_pvalue)
    return [
        (int(c.index), float(c.stats.mean_1), float(c.stats.mean_2), float(c.stats.pvalue))
        for c in found
    ]


def _noise(points: Sequence[Point]) -> float:
    return statistics.median(p.spread for p in points) if points else 0.0


def run_to_run(points: Sequence[Point]) -> float | None:
    """How far runs scatter in a segment: the larger of the standard deviation and the
    MAD as one (None: one run). One run alone is a blip, not the segment's scatter (as
    it is not a change): from ``TRIM_FROM`` runs on, the one farthest from the median is
    left out. CI's fresh clone saw one run 3x slower, early in a series, hide a 2.5x
    step: the standard deviation it alone made was over a third of the step."""
    if len(points) < 2:
        return None
    values = [p.value for p in points]
    middle = statistics.median(values)
    if len(values) >= TRIM_FROM:
        values.remove(max(values, key=lambda value: abs(value - middle)))
        middle = statistics.median(values)
    mad = MAD_TO_SIGMA * statistics.median(abs(value - middle) for value in values)
    return max(mad, statistics.stdev(values))


def _scatter(left: Sequence[Point], right: Sequence[Point]) -> float:
    sides = [s for s in (run_to_run(left), run_to_run(right)) if s is not None]
    return math.sqrt(sum(s * s for s in sides) / len(sides)) if sides else 0.0


def change_points(
    series: str, figure: str, points: Sequence[Point], higher_is_better: bool,
    max_pvalue: float = DEFAULT_MAX_PVALUE, min_effect: float = DEFAULT_MIN_EFFECT,
) -> list[ChangePoint]:  # fmt: skip
    """The changes in one series (``points`` oldest first) beyond the runs' own noise
    and ``min_effect`` times their scatter from run to run."""
    if len(points) < 3:
        return []
    values = [p.value for p in points]
    if max(values) == min(values):
        return []
    found = []
    detected = _detect(values, max_pvalue)
    bounds = [0, *(index for index, *_ in detected), len(points)]
    for number, (index, before, after, p_value) in enumerate(detected, 1):
        left = points[bounds[number - 1] : index]
        right = points[index : bounds[number + 1]]
        shift = abs(after - before)
        if shift <= math.hypot(_noise(left), _noise(right)):
            continue
        if shift <= min_effect * _scatter(left, right):
            continue
        verdicts = Counter(p.verdict for p in right)
        of_server = verdicts.most_common(1)[0][0] != "generator-bound"
        worse = after < before if higher_is_better else after > before
        found.append(ChangePoint(series, figure, points[index].run_id, index, before, after,
                                 p_value, worse, of_server, runs_after=len(right)))  # fmt: skip
    return found
