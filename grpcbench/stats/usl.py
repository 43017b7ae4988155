"""Gunther's Universal Scalability Law, fitted to a concurrency sweep.

    X(N) = λN / (1 + σ(N - 1) + κN(N - 1))

λ is the throughput of one user, σ the contention (the serial share: queueing
on a lock, a GIL, one core), κ the coherency cost (crosstalk that makes
throughput *fall* past a peak). With κ > 0 the peak is at N* = √((1 - σ)/κ).
Fitted by least squares (scipy's ``curve_fit``, the ``stats`` extra) when a
sweep has at least ``MIN_LEVELS`` levels including N = 1, which pins λ. How
far to trust it: R², and every level left out of a fit in turn and predicted
by the others (the worst miss is stated).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from grpcbench.base.errors import UsageError

MIN_LEVELS = 5


@dataclass(frozen=True)
class UslFit:
    sigma: float
    kappa: float
    lam: float  # calls/s of one user (λ)
    r_squared: float
    worst_left_out_error: float  # largest |predicted - measured| / measured, leave-one-out

    def throughput(self, n: float) -> float:
        return usl(n, self.sigma, self.kappa, self.lam)

    @property
    def peak_concurrency(self) -> float:
        """N*: where throughput peaks (infinite without coherency cost)."""
        return math.sqrt((1 - self.sigma) / self.kappa) if self.kappa > 0 else math.inf

    @property
    def peak_throughput(self) -> float:
        n = self.peak_concurrency
        return self.lam / self.sigma if math.isinf(n) and self.sigma > 0 else self.throughput(n)

    def describe(self) -> str:
        peak = (
            f"peak at N*≈{self.peak_concurrency:,.0f}, {self.peak_throughput:,.0f} req/s"
            if math.isfinite(self.peak_concurrency)
            else f"no peak (κ≈0), ceiling λ/σ ≈ {self.peak_throughput:,.0f} req/s"
        )
        return (
            f"USL σ={self.sigma:.3g}, κ={self.kappa:.3g}, λ={self.lam:,.0f}/s,"
            f" R²={self.r_squared:.3f}; {peak}; a level left out is predicted within"
            f" {self.worst_left_out_error:.0%}"
        )


def usl(n: float, sigma: float, kappa: float, lam: float) -> float:
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def _fit(points: Sequence[tuple[float, float]]) -> tuple[float, float, float]:
    try:
        from scipy.optimize import curve_fit
    except ImportError:
        raise UsageError("the USL fit needs scipy: pip install 'grpcbench[stats]'") from None
    xs = [n for n, _ in points]
    ys = [x for _, x in points]
    first = dict(points).get(1.0, ys[0])
    params, _ = curve_fit(
        lambda n, s, k, lam: [usl(v, s, k, lam) for v in n], xs, ys,
        p0=(0.1, 0.001, first), bounds=([0.0, 0.0, 0.0], [1.0, 1.0, math.inf]), maxfev=20000,
    )  # fmt: skip
    return float(params[0]), float(params[1]), float(params[2])


def fit_usl(points: Sequence[tuple[float, float]]) -> UslFit | None:
    """(concurrency, req/s) per level -> the fit; None without enough levels or N = 1."""
    points = sorted((float(n), float(x)) for n, x in points)
    if len(points) < MIN_LEVELS or points[0][0] != 1.0:
        return None
    sigma, kappa, lam = _fit(points)
    ys = [x for _, x in points]
    mean = sum(ys) / len(ys)
    residual = sum((x - usl(n, sigma, kappa, lam)) ** 2 for n, x in points)
    total = sum((x - mean) ** 2 for x in ys)
    r_squared = 1 - residual / total if total else 1.0
    worst = 0.0
    for index, (n, x) in enumerate(points):
        if n == 1.0:
            continue  # λ needs N = 1: every fit keeps it
        others = points[:index] + points[index + 1 :]
        s, k, lam_ = _fit(others)
        worst = max(worst, abs(usl(n, s, k, lam_) - x) / x)
    return UslFit(sigma, kappa, lam, r_squared, worst)
