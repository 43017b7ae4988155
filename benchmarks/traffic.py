"""What mixes and chains cost, on grpc-go's route_guide (``nox -s traffic``).

Issues 42 and 53's goals, measured side by side in one run, rounds interleaved, medians:
- a three-method weighted mix (GetFeature 8, ListFeatures 1, RecordRoute 1) costs at
  most 1.1x the client CPU per call of the single-method generator. Three readings
  are printed: against GetFeature alone, against the same methods run one at a time
  (their CPU per call weighted 8:1:1), and a mix of one method in three entries
  against that method alone, which is the cost of mixing itself;
- a two-step chain (GetFeature, then ListFeatures over the point it returned) reaches
  at least 0.8x the calls/s of the same two calls issued independently (a 1:1 mix);
- an open-loop mix keeps its proportions: per method, |calls - share| <= 1 over the level.

route_guide runs pinned to CPU 0, the generator to CPU 1 (``--client-cpus 1``). The
figures are grpcbench's own results files (generator CPU from /proc, per level).
Numbers to track, not assertions: machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/, this script's directory
from clients import save_record

POINT = {"latitude": 409146138, "longitude": -746188906}  # a feature of route_guide's db
SMALL_RECT = {  # ListFeatures over a rectangle holding that one feature
    "lo": {"latitude": 409146137, "longitude": -746188907},
    "hi": {"latitude": 409146139, "longitude": -746188905},
}
ROUTE = [POINT, {"latitude": 410000000, "longitude": -745000000}]
METHODS = {
    "GetFeature": ("routeguide.RouteGuide/GetFeature", POINT),
    "ListFeatures": ("routeguide.RouteGuide/ListFeatures", SMALL_RECT),
    "RecordRoute": ("routeguide.RouteGuide/RecordRoute", ROUTE),
}
WEIGHTS = {"GetFeature": 8, "ListFeatures": 1, "RecordRoute": 1}
FLOW = f"""
async def chain(client):
    feature = await client.unary("routeguide.RouteGuide/GetFeature", {POINT!r}, name="get")
    here = {{"latitude": feature.location.latitude, "longitude": feature.location.longitude}}
    await client.server_stream(
        "routeguide.RouteGuide/ListFeatures", {{"lo": here, "hi": here}}, name="list"
    )
"""


def _mix_file(directory: Path, proto: str, entries: list[tuple[str, int]]) -> Path:
    """A scenario whose [call] is a mix of ``entries``: (method name, weight) each; a
    name may come more than once (a mix of one method, to weigh mixing alone)."""
    lines = [f'name = "mix"\n[call]\nproto = "{proto}"\n']
    for name, weight in entries:
        method, data = METHODS[name]
        entry = f'[[mix]]\nmethod = "{method}"\nweight = {weight}\n'
        lines.append(entry + f"data = '{json.dumps(data)}'\n")
    path = directory / f"mix-{'-'.join(f'{name}{weight}' for name, weight in entries)}.toml"
    path.write_text("".join(lines))
    return path


def _run(address: str, proto: str, directory: Path, args: list[str]) -> dict:
    out = directory / "r.json"
    command = [
        sys.executable, "-P", "-m", "grpcbench", "run", address, "--insecure", "--warmup", "2000",
        "--client-cpus", "1", "--output", str(out), *args,
    ]  # fmt: skip
    subprocess.run(command, check=True, cwd=directory, capture_output=True, text=True)
    (level,) = json.loads(out.read_text())["levels"]
    return level["load"]


def _cpu_per_call(load: dict) -> float:
    return load["client_cpu_s"] / sum(load["statuses"].values()) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--route-guide", default=os.environ.get("GRPCBENCH_ROUTE_GUIDE", ""))
    parser.add_argument("--proto", default=os.environ.get("GRPCBENCH_ROUTE_GUIDE_PROTO", ""))
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--save", help="write every figure as JSON")
    parser.add_argument(
        "--no-instructions", dest="instructions", action="store_false",
        help="skip instructions per call under callgrind (about 10 min)",
    )  # fmt: skip
    args = parser.parse_args()
    if not (args.route_guide and args.proto):
        parser.error("give --route-guide and --proto (nox -s traffic builds them)")
    port = 50000 + os.getpid() % 10000
    server = subprocess.Popen(["taskset", "-c", "0", args.route_guide, "-port", str(port)])
    address = f"127.0.0.1:{port}"
    time.sleep(1.0)
    samples: dict[str, list[float]] = {}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            directory = Path(scratch)
            (directory / "route_flow.py").write_text(FLOW)
            level = ["-c", str(args.concurrency), "-n", str(args.requests)]
            for round_number in range(args.repeat):
                for name, (method, data) in METHODS.items():
                    one = ["--proto", args.proto, "--call", method, "-d", json.dumps(data)]
                    load = _run(address, args.proto, directory, [*one, *level])
                    samples.setdefault(f"single {name} cpu", []).append(_cpu_per_call(load))
                    if name == "GetFeature":
                        samples.setdefault("single GetFeature rps", []).append(
                            sum(load["statuses"].values()) / load["wall_s"]
                        )
                mix = _mix_file(directory, args.proto, list(WEIGHTS.items()))
                load = _run(address, args.proto, directory, ["--scenario", str(mix), *level])
                samples.setdefault("mix cpu", []).append(_cpu_per_call(load))
                same = _mix_file(directory, args.proto, [("GetFeature", 1)] * 3)
                load = _run(address, args.proto, directory, ["--scenario", str(same), *level])
                samples.setdefault("mix of GetFeature x3 cpu", []).append(_cpu_per_call(load))
                pair = _mix_file(directory, args.proto, [("GetFeature", 1), ("ListFeatures", 1)])
                load = _run(address, args.proto, directory, ["--scenario", str(pair), *level])
                samples.setdefault("independent calls/s", []).append(
                    sum(load["statuses"].values()) / load["wall_s"]
                )
                flows = ["-c", str(args.concurrency), "-n", str(args.requests // 2)]
                chain = ["--workload", "route_flow:chain", "--proto", args.proto, *flows]
                load = _run(address, args.proto, directory, chain)
                steps = sum(sum(step["statuses"].values()) for step in load["steps"])
                samples.setdefault("chain calls/s", []).append(steps / load["wall_s"])
                paced = ["--scenario", str(mix), "--rate", "5000", "--duration", "4s"]
                load = _run(address, args.proto, directory, paced)
                total = sum(sum(m["statuses"].values()) for m in load["methods"])
                worst = max(
                    abs(sum(m["statuses"].values()) - total * m["weight"] / 10)
                    for m in load["methods"]
                )
                samples.setdefault("open-loop worst deviation (calls)", []).append(worst)
                print(f"round {round_number + 1}: " + ", ".join(
                    f"{key} {values[-1]:.1f}" for key, values in samples.items()
                ), flush=True)  # fmt: skip
        instructions = (
            _instructions(address, args.proto, args.concurrency) if args.instructions else {}
        )
    finally:
        server.terminate()
        server.wait()
    median = {key: statistics.median(values) for key, values in samples.items()}
    parts = sum(median[f"single {name} cpu"] * w for name, w in WEIGHTS.items()) / 10
    print(f"\nmedians of {args.repeat} interleaved rounds, c={args.concurrency}")
    for key, value in median.items():
        print(f"  {key}: {value:,.1f}")
    ratios = {
        "mix / GetFeature alone, CPU per call": median["mix cpu"] / median["single GetFeature cpu"],
        "mix / its methods one at a time (8:1:1), CPU per call": median["mix cpu"] / parts,
        "mix of one method (3 entries) / that method alone, CPU per call": (
            median["mix of GetFeature x3 cpu"] / median["single GetFeature cpu"]
        ),
        "chain / independent, calls/s": median["chain calls/s"] / median["independent calls/s"],
        "open loop: worst |calls - share| per method": median["open-loop worst deviation (calls)"],
    }
    for key, value in ratios.items():
        print(f"{key}: {value:.2f}")
    print("goals: mix <= 1.1x, chain >= 0.8x, open loop <= 1 call")
    if args.save:
        save_record(
            args.save, "traffic", samples=samples, medians=median, ratios=ratios,
            rounds=args.repeat, concurrency=args.concurrency, requests=args.requests,
            instructions=instructions,
        )  # fmt: skip


# Calls of the two runs whose difference gives instructions per call (a flow: per step).
SMALL, LARGE = 2000, 12000


def _instructions(address: str, proto: str, concurrency: int) -> dict[str, float]:
    """The generator's instructions per call (callgrind: a run of LARGE calls less one of
    SMALL), which load on the machine cannot move, for the singles, the mixes, the chain
    and its independent pair; two runs at a time (one per core)."""
    from concurrent.futures import ThreadPoolExecutor

    from instructions import generator_instructions

    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        (directory / "route_flow.py").write_text(FLOW)
        level = [address, "--insecure", "-c", str(concurrency)]
        runs: dict[str, tuple[list[str], int]] = {}
        for name, (method, data) in METHODS.items():
            runs[name] = ([*level, "--proto", proto, "--call", method, "-d", json.dumps(data)], 1)
        mixes = {
            "mix": list(WEIGHTS.items()), "mix of GetFeature x3": [("GetFeature", 1)] * 3,
            "independent": [("GetFeature", 1), ("ListFeatures", 1)],
        }  # fmt: skip
        for name, entries in mixes.items():
            runs[name] = ([*level, "--scenario", str(_mix_file(directory, proto, entries))], 1)
        runs["chain"] = ([*level, "--workload", "route_flow:chain", "--proto", proto], 2)

        def per_call(item: tuple[str, tuple[list[str], int]]) -> tuple[str, float]:
            name, (run_args, steps) = item
            small, large = (generator_instructions(run_args, calls // steps, directory)
                            for calls in (SMALL, LARGE))  # fmt: skip
            return name, (large - small) / (LARGE - SMALL)

        with ThreadPoolExecutor(2) as pool:
            figures = dict(pool.map(per_call, runs.items()))
    for name, count in figures.items():
        print(f"instructions per call, {name}: {count:,.0f}")
    return figures


if __name__ == "__main__":
    main()
