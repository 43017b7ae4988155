"""Generate the grpcio and grpclib stubs from protos/ (the only way they are made).

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


def proto_files() -> list[Path]:
    return sorted(PROTO_ROOT.rglob("*.proto"))


def generate(out_dir: Path) -> list[Path]:
    """Run protoc; returns the generated files (relative to out_dir)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    sources = [str(p.relative_to(PROTO_ROOT)) for p in proto_files()]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"--python_out={out_dir}",
            f"--pyi_out={out_dir}",
            f"--grpc_python_out={out_dir}",
            f"--grpclib_python_out={out_dir}",
            *sources,
        ],  # fmt: skip
        check=True,
        cwd=PROTO_ROOT,
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
