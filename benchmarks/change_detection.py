"""Change points in real runs (``nox -s history``): how often the detector finds an
injected change at its run, and how often it finds one where there is none.

Each round runs two interleaved series of real runs on this machine
(tests/support/run_series.py): ``step``, whose server's handler starts waiting at
run 12 of 20, and ``flat`` and ``canary``, the same server unchanged. It prints, per
round, where change points were found, then the counts: steps found at their run
(±1), other changes in the step series, flat series where one was found, and flat
series where one was found that its canary (``history --control``) does not share,
confirmed (more than one run shows it) or not (it rests on the newest run alone).
Numbers to read, not assertions (the integration test asserts one round).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's tests.support
from tests.support.run_series import Series, found_at, history_json, run_series  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--delay-ms", type=float, default=0.5)
    args = parser.parse_args()
    series = Series(runs=args.runs, change_at=args.runs * 3 // 5, delay_ms=args.delay_ms)
    found = other = false = false_against_canary = unconfirmed_against_canary = 0
    for number in range(1, args.rounds + 1):
        with tempfile.TemporaryDirectory() as tmp:
            url = run_series(series, Path(tmp) / "runs.db")
            step, flat = history_json(url, "step"), history_json(url, "flat")
            against = history_json(url, "flat", control="canary")
        at_step, at_flat = found_at(step), found_at(flat)
        code_changes = found_at(against, ("regression", "improvement"))
        confirmed = [at for at, change in zip(found_at(against), against["change_points"],
                                              strict=True)
                     if change["kind"] != "host" and change["confirmed"]]  # fmt: skip
        hit = [at for at in at_step if abs(at - series.change_at) <= 1]
        found += bool(hit)
        other += len(at_step) - len(hit[:1])
        false += bool(at_flat)
        false_against_canary += bool(confirmed)
        unconfirmed_against_canary += bool(code_changes) and not confirmed
        print(f"round {number}: step changed at run {series.change_at}, found at {at_step};"
              f" flat: found at {at_flat}, not the canary's at {code_changes}")  # fmt: skip
    print(f"{args.rounds} rounds of {args.runs} runs: step found at its run (±1) in {found};"
          f" {other} other change point(s) in the step series; a change found in {false}"
          f" of {args.rounds} flat series, one its canary does not share in"
          f" {false_against_canary} (confirmed) and {unconfirmed_against_canary} more"
          f" (unconfirmed: the newest run alone)")  # fmt: skip


if __name__ == "__main__":
    main()
