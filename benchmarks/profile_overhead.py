"""What ``--profile`` costs the server (``nox -s profile_overhead``).

The same level with and without py-spy sampling the server, in interleaved
rounds (a fresh server each run), through the CLI as users run it; prints the
median req/s of each and their ratio, and ``--save`` writes the runs for
``scripts/render_results.py``. Numbers to read, not assertions.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# benchmarks/, this script's directory
from clients import save_record

from grpcbench.results import load_run


def one_run(command: str, workdir: Path) -> float:
    output = workdir / "r.json"
    argv = [*shlex.split(command)[1:], "--output", str(output)]
    subprocess.run([sys.executable, "-P", "-m", "grpcbench", *argv], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    (level,) = load_run(output).levels
    return level.load.rps


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--servers", default="grpclib,grpcio-aio,grpcio:workers=10")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", default="5s")
    parser.add_argument("--save", help="write the runs as JSON (scripts/render_results.py)")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as workdir:
        for server in args.servers.split(","):
            base = f"grpcbench run -s {server} -c 50 --duration {args.duration} --warmup 1s"
            for round_number in range(1, args.rounds + 1):
                for profiled in (False, True):  # interleaved: drift hits both alike
                    command = base + (" --profile" if profiled else "")
                    rps = one_run(command, Path(workdir))
                    runs.append({"server": server, "profiled": profiled, "round": round_number,
                                 "rps": rps, "command": command})  # fmt: skip
                    print(f"{server} round {round_number} profiled={profiled}: {rps:,.0f} req/s")
            plain = statistics.median(r["rps"] for r in runs if r["server"] == server
                                      and not r["profiled"])  # fmt: skip
            sampled = statistics.median(r["rps"] for r in runs if r["server"] == server
                                        and r["profiled"])  # fmt: skip
            print(f"{server}: profiled / plain = {sampled / plain:.3f}")
    if args.save:
        save_record(args.save, "profile-overhead", rounds=args.rounds, runs=runs)


if __name__ == "__main__":
    main()
