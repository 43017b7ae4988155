"""What ``--profile`` costs the server, and where hello's CPU goes (``nox -s profile_overhead``).

The same level plain, with ``--profile`` (py-spy nonblocking, the default) and
with ``--profile --profile-native`` (py-spy pauses the server for each sample to
read C frames), in interleaved rounds (a fresh server each run), through the
CLI as users run it; prints the median req/s of each and the ratios, and
``--save`` writes the runs for ``scripts/render_results.py``. ``--save-profiles``
then runs the three kinds once more with ``--profile`` (the default mode: what a
user gets) and keeps that results file and its collapsed stacks (the README's
top functions). Numbers to read, not assertions.
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

from grpcbench.model.results_file import load_run

MODES = {"plain": "", "profile": " --profile", "native": " --profile --profile-native"}


def one_run(command: str, workdir: Path) -> float:
    output = workdir / "r.json"
    argv = [*shlex.split(command)[1:], "--output", str(output)]
    subprocess.run([sys.executable, "-P", "-m", "grpcbench", *argv], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    (level,) = load_run(output).levels
    return level.measured.rps


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--servers", default="grpclib,grpcio-aio,grpcio:workers=10")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", default="5s")
    parser.add_argument("--save", help="write the runs as JSON (scripts/render_results.py)")
    parser.add_argument("--save-profiles", help="write a --profile run of the kinds here")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as workdir:
        for server in args.servers.split(",") if args.rounds else []:
            base = f"grpcbench run -s {server} -c 50 --duration {args.duration} --warmup 1s"
            for round_number in range(1, args.rounds + 1):
                for mode, flags in MODES.items():  # interleaved: drift hits every mode alike
                    command = base + flags
                    rps = one_run(command, Path(workdir))
                    runs.append({"server": server, "mode": mode, "round": round_number,
                                 "rps": rps, "command": command})  # fmt: skip
                    print(f"{server} round {round_number} {mode}: {rps:,.0f} req/s")
            plain = statistics.median(r["rps"] for r in runs if r["server"] == server
                                      and r["mode"] == "plain")  # fmt: skip
            for mode in ("profile", "native"):
                sampled = statistics.median(r["rps"] for r in runs if r["server"] == server
                                            and r["mode"] == mode)  # fmt: skip
                print(f"{server}: {mode} / plain = {sampled / plain:.3f}")
    if args.save:
        save_record(args.save, "profile-overhead", rounds=args.rounds, runs=runs)
    if args.save_profiles:  # also alone: --rounds 0
        save_profiles(Path(args.save_profiles), args.servers.split(","), args.duration)


def save_profiles(output: Path, servers: list[str], duration: str) -> None:
    """One run of every kind at c=50 with --profile; its .profiles folder keeps only the
    collapsed stacks (the speedscope files hold the same samples)."""
    kinds = [arg for server in servers for arg in ("-s", server)]
    subprocess.run(
        [sys.executable, "-P", "-m", "grpcbench", "run", *kinds, "-c", "50", "--duration",
         duration, "--warmup", "1s", "--profile", "--output", str(output)],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    for extra in output.with_suffix(".profiles").glob("*.speedscope.json"):
        extra.unlink()
    print(f"wrote {output} and {output.with_suffix('.profiles')}")


if __name__ == "__main__":
    main()
