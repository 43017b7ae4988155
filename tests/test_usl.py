"""The Universal Scalability Law fit: known parameters recovered, when it is (not) fitted."""

from __future__ import annotations

from dataclasses import replace

import pytest

from grpcbench.report.scalability import usl_lines
from grpcbench.stats.usl import fit_usl, usl
from tests.support.factories import level

pytest.importorskip("scipy")

SIGMA, KAPPA, LAM = 0.08, 0.0015, 2000.0
LEVELS = (1, 2, 5, 10, 20, 40, 80)


def _points(noise: float = 0.0) -> list[tuple[int, float]]:
    """The law's throughput at each level, off by +-noise alternately (measurement noise)."""
    return [
        (n, usl(n, SIGMA, KAPPA, LAM) * (1 + noise * (-1) ** index))
        for index, n in enumerate(LEVELS)
    ]


@pytest.mark.parametrize("noise", [0.0, 0.005])
def test_known_sigma_and_kappa_are_recovered_within_5_percent(noise: float) -> None:
    fit = fit_usl(_points(noise))
    assert fit is not None
    assert fit.sigma == pytest.approx(SIGMA, rel=0.05)
    assert fit.kappa == pytest.approx(KAPPA, rel=0.05)
    assert fit.lam == pytest.approx(LAM, rel=0.05)
    assert fit.r_squared > 0.99
    assert fit.peak_concurrency == pytest.approx(((1 - SIGMA) / KAPPA) ** 0.5, rel=0.05)
    assert fit.worst_left_out_error < 0.05  # every level predicted by the others


def test_no_fit_without_five_levels_or_concurrency_1() -> None:
    assert fit_usl(_points()[:4]) is None
    assert fit_usl(_points()[1:]) is None


def _sweep(levels: tuple[int, ...]) -> list:  # type: ignore[type-arg]
    sweep = []
    for n in levels:
        base = level("grpcio-aio", concurrency=n)
        rps = usl(n, SIGMA, KAPPA, LAM)
        sweep.append(
            replace(base, measured=replace(base.measured, wall_s=base.measured.count / rps))
        )
    return sweep


def test_a_sweep_gets_a_summary_line_and_a_short_one_none() -> None:
    (line,) = usl_lines(_sweep(LEVELS))
    assert line.startswith("grpcio-aio: USL σ=0.08") and "peak at N*≈25" in line
    assert usl_lines(_sweep((1, 10, 25, 50))) == []
