"""Generate the grpcio and grpclib stubs from protos/ and examples/ (the only way they are made).

    python scripts/generate_protos.py            # into the repository (nox -s proto)
    python scripts/generate_protos.py OUT_DIR    # elsewhere (the staleness test)

Needs grpcio-tools (pinned in the dev extra: stubs depend on its version) and
grpclib's protoc plugin, which lives next to the running Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROTO_ROOT = REPO / "protos"
# (import root, where its stubs go relative to the repository): the package's
# protos, and the example of benchmarking your own service (stubs beside it).
ROOTS = ((PROTO_ROOT, Path(".")), (REPO / "examples/echo", Path("examples/echo")))


def proto_files(root: Path = PROTO_ROOT) -> list[Path]:
    return sorted(root.rglob("*.proto"))


def generate(out_dir: Path) -> list[Path]:
    """Run protoc for every root; returns the generated files (relative to out_dir)."""
    generated = []
    for root, destination in ROOTS:
        generated += [destination / path for path in _generate(root, out_dir / destination)]
    return generated


def _generate(root: Path, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    sources = [str(p.relative_to(root)) for p in proto_files(root)]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{root}",
            f"--python_out={out_dir}",
            f"--pyi_out={out_dir}",
            f"--grpc_python_out={out_dir}",
            f"--grpclib_python_out={out_dir}",
            *sources,
        ],  # fmt: skip
        check=True,
        cwd=root,
        env=env,
    )
    generated = []
    for source in sources:
        stem = Path(source).with_suffix("")
        for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_grpc.py"):
            generated.append(stem.parent / f"{stem.name}{suffix}")
    return generated


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO
    for path in generate(target):
        print(path)
