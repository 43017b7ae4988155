"""Where a default run's time goes (``nox -s run_overhead``): measured phases, and the rest.

`grpcbench run` on its embedded defaults (six server kinds, four levels each) is what
a newcomer runs first. Its wall time, from the process's start to its exit, is split
with the saved results' own timestamps into:

- the measured phases (each level's ``wall_s``);
- each level's time around its measured phase: its warm-up calls (500 by default on
  a server's first level, each user's first 2 on its later ones: ``model.warmup``),
  its generator's connections and its result's way back;
- between levels: a server kind stopping and the next starting;
- before the first level (imports, options, the first server's start) and after the
  last (tables, files, exit).

Each round runs the defaults as they are and with ``--warmup 0``, interleaved, so the
warm-up's share stands beside the fixed costs': medians from one run. Numbers to
read side by side, not assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from clients import save_record

VARIANTS = {"defaults": [], "--warmup 0": ["--warmup", "0"]}


def _seconds(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def one_run(extra: list[str], directory: Path) -> dict[str, float]:
    """One default run, timed from outside, split by its results' timestamps."""
    out = directory / "run.json"
    started = time.time()
    subprocess.run(
        [sys.executable, "-P", "-m", "grpcbench", "run", "--output", str(out), *extra],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    ended = time.time()
    record = json.loads(out.read_text())
    levels = record["levels"]
    first, last = _seconds(levels[0]["started_at"]), _seconds(levels[-1]["finished_at"])
    in_levels = sum(_seconds(lv["finished_at"]) - _seconds(lv["started_at"]) for lv in levels)
    measured = sum(lv["load"]["wall_s"] for lv in levels)
    whole = ended - started
    return {
        "whole_s": whole,
        "measured_s": measured,
        "around_measured_s": in_levels - measured,
        "between_levels_s": (last - first) - in_levels,
        "before_first_s": first - started,
        "after_last_s": ended - last,
        "outside_share": (whole - measured) / whole,
        "levels": float(len(levels)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--save", help="write every figure as JSON")
    args = parser.parse_args()
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as scratch:
        for round_number in range(args.rounds):
            for name, extra in VARIANTS.items():  # interleaved: the same machine state
                samples[name].append(one_run(extra, Path(scratch)))
                figures = samples[name][-1]
                print(f"round {round_number + 1} {name}: {figures['whole_s']:.1f} s,"
                      f" outside measured {figures['outside_share']:.1%}")  # fmt: skip
    medians = {
        name: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        for name, runs in samples.items()
    }
    for name, figures in medians.items():
        print(f"{name}: " + ", ".join(f"{key} {value:.3f}" for key, value in figures.items()))
    if args.save:
        save_record(args.save, "run-overhead", rounds=args.rounds, samples=samples, medians=medians)


if __name__ == "__main__":
    main()
