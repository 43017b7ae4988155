"""What a level's warm-up buys (``nox -s warmup``), on the default server kinds.

Two questions, each answered with `grpcbench run` itself, rounds interleaved:

- **A fresh server.** 300 calls at concurrency 2 on a server that has served
  nothing, after a warm-up of 0, 20 and 500 calls: how far the first calls' p50
  and p99 sit from the warmed ones. This is what ``--warmup`` is for.
- **A later level on the same server** (``model.warmup``): concurrency C measured
  after a level of concurrency 2 on the same server, whose warm-up is then each
  user's first 2 calls, beside concurrency C alone on a fresh server after the
  whole warm-up of 500 calls. If the rule is right, their ratios sit at 1 within the
  rounds' spread.

Medians of the rounds; numbers to read side by side, not assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from clients import save_record

from grpcbench.base import defaults
from grpcbench.model.results_file import load_run

FRESH_WARMUPS = (0, 20, 500)
LATER_CONCURRENCY = (10, 25, 50)


def _run(arguments: list[str], out: Path) -> list[dict[str, float | str | int]]:
    """One `grpcbench run`; each level's server, concurrency, warm-up and figures."""
    subprocess.run(
        [sys.executable, "-P", "-m", "grpcbench", "run", "--output", str(out), *arguments],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    levels: list[dict[str, float | str | int]] = []
    for level in load_run(out).levels:
        latency = level.measured.latency
        levels.append({
            "server": level.server,
            "concurrency": level.plan.concurrency,
            "warmup_requests": level.warmup.requests if level.warmup else -1,
            "p50_ms": latency.percentile_us(50) / 1000,
            "p99_ms": latency.percentile_us(99) / 1000,
            "rps": level.measured.rps,
        })  # fmt: skip
    return levels


def one_round(servers: str, directory: Path) -> list[dict[str, float | str | int]]:
    """Every arm once: fresh servers after each warm-up, then each later level both ways."""
    out = directory / "run.json"
    rows: list[dict[str, float | str | int]] = []
    for warmup in FRESH_WARMUPS:
        for level in _run(["-s", servers, "-c", "2", "-n", "300", "--warmup", str(warmup)], out):
            rows.append({"arm": f"fresh, warm-up {warmup}", **level})
    for concurrency in LATER_CONCURRENCY:
        for level in _run(["-s", servers, "-c", str(concurrency), "-n", "5000"], out):
            rows.append({"arm": f"c={concurrency} alone, fresh server", **level})
        for level in _run(["-s", servers, "-c", f"2,{concurrency}", "-n", "5000"], out):
            if level["concurrency"] == concurrency:
                rows.append({"arm": f"c={concurrency} after c=2, same server", **level})
    return rows


def medians(rows: list[dict[str, float | str | int]]) -> dict[str, dict[str, dict[str, float]]]:
    """arm -> server -> median p50, p99, req/s and warm-up over the rounds."""
    grouped: dict[tuple[str, str], list[dict[str, float | str | int]]] = {}
    for row in rows:
        grouped.setdefault((str(row["arm"]), str(row["server"])), []).append(row)
    result: dict[str, dict[str, dict[str, float]]] = {}
    for (arm, server), runs in grouped.items():
        result.setdefault(arm, {})[server] = {
            key: statistics.median(float(run[key]) for run in runs)
            for key in ("p50_ms", "p99_ms", "rps", "warmup_requests")
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--servers", default=" ".join(defaults.SERVERS))
    parser.add_argument("--save", help="write every figure as JSON")
    args = parser.parse_args()
    rows: list[dict[str, float | str | int]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for round_number in range(args.rounds):
            found = one_round(args.servers, Path(scratch))
            rows += [{**row, "round": round_number} for row in found]
            print(f"round {round_number + 1}: {len(found)} levels")
    figures = medians(rows)
    print(json.dumps(figures, indent=1))
    if args.save:
        save_record(args.save, "warmup", rounds=args.rounds, samples=rows, medians=figures)


if __name__ == "__main__":
    main()
