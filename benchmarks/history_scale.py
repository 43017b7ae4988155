"""The store at scale (``nox -s history``): `grpcbench history` and the dashboard's
project page on a project of 1,000 runs, against issue 54's 1 s goals.

The runs are the default run's results file (24 series, 168 figures a run), stored
1,000 times with another start each; their figures are then spread by up to ±10%
(deterministically), so the detector has real series to test, not constants, and
their change points are found once, as `grpcbench store` does. It prints the
median wall time of `grpcbench history` (a whole process, imports and all), and of
the project page's first load and a second one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grpcbench.history.history import refresh
from grpcbench.history.store import Store

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results" / "default-run.json"


def build(url: str, runs: int) -> None:
    from sqlalchemy import text

    store = Store(url)
    data = json.loads(RESULTS.read_text())
    for number in range(runs):
        data["started_at"] = f"2026-01-01T00:00:00.{number:03}+00:00" if runs <= 1000 else (
            f"2026-01-{1 + number // 1000:02}T00:00:00.{number % 1000:03}+00:00")  # fmt: skip
        store.save("big", data, f"run {number}")
    with store.engine.begin() as connection:
        connection.execute(text(
            "UPDATE figures SET value = value * (0.9 + 0.2 * ((run_id * 7919 + length(series)"
            " * 104729) % 1000) / 1000.0)"
        ))  # fmt: skip
    refresh(store, "big")  # as `grpcbench store` does once its files are in


def time_history(url: str, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "grpcbench", "history", "--store", url,
                        "--project", "big", "--figure", "p50", "--format", "json"],
                       check=True, capture_output=True)  # fmt: skip
        times.append(time.perf_counter() - started)
    return times


def time_page(url: str, rounds: int) -> tuple[list[float], list[float]]:
    from aiohttp.test_utils import TestClient, TestServer

    from grpcbench.history.web import Dashboard, make_app

    first: list[float] = []
    again: list[float] = []

    async def one() -> None:
        async with TestClient(TestServer(make_app(Dashboard(Store(url))))) as client:
            for times in (first, again):
                started = time.perf_counter()
                answer = await client.get("/projects/big?figure=p50")
                assert answer.status == 200
                await answer.read()
                times.append(time.perf_counter() - started)

    for _ in range(rounds):
        asyncio.run(one())
    return first, again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/big.db"
        started = time.perf_counter()
        build(url, args.runs)
        print(f"stored {args.runs} runs of {RESULTS.name} in {time.perf_counter() - started:.1f} s")
        history = time_history(url, args.rounds)
        first, again = time_page(url, args.rounds)
    for name, times in (
        ("grpcbench history (a process)", history),
        ("project page, first load", first),
        ("project page, cached", again),
    ):
        spread = ", ".join(f"{t:.2f}" for t in times)
        print(f"  {name:<32} median {statistics.median(times):.2f} s   ({spread})")


if __name__ == "__main__":
    main()
