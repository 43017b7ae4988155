"""The wheel users install carries the scenarios, the protos and the stubs."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.integration
def test_wheel_contents(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        check=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("grpcbench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "grpcbench/_data/scenarios/hello.toml",
        "grpcbench/_data/protos/grpcbench/proto/helloworld.proto",
        "grpcbench/proto/helloworld_pb2.py",
        "grpcbench/proto/helloworld_grpc.py",
        "grpcbench/servers/child.py",
    ):
        assert expected in names
    assert not [name for name in names if name.startswith("tests/")]
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "grpcbench = grpcbench.cli.entry:main" in text
    assert "[grpcbench.services]" in text
