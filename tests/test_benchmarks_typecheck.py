"""The benchmarks and scripts still call grpcbench as it is: mypy over them (not
strict, benchmarks/mypy.ini). A rename in the package once broke ``nox -s loadgen``
with nothing in CI to say so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.integration
def test_benchmarks_and_scripts_type_check(tmp_path: Path) -> None:
    files = sorted(str(p) for p in (*ROOT.glob("benchmarks/*.py"), *ROOT.glob("scripts/*.py")))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "benchmarks/mypy.ini",
         "--cache-dir", str(tmp_path / "cache"), *files],
        cwd=ROOT, env={**os.environ, "MYPYPATH": "benchmarks"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
