"""The warm command-line runner the tests use is what a fresh ``python -m grpcbench`` is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import GRPCBENCH, run_grpcbench


@pytest.mark.parametrize("args", [["run", "--concurrency", "0"], ["nope"]])
def test_a_forked_command_is_a_fresh_process_s_output_and_exit(args: list[str]) -> None:
    cold = subprocess.run([*GRPCBENCH, *args], capture_output=True, text=True, check=False)
    warm = run_grpcbench(*args)
    assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
    assert warm.stderr == cold.stderr


def test_a_forked_command_sees_the_test_s_environment_and_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "here.json").write_text("[]")
    result = run_grpcbench("report", "here.json", "--html", "r.html", cwd=tmp_path)
    assert result.returncode == 2 and "here.json" in result.stderr, result.stderr


def test_a_forked_command_past_its_timeout_is_killed() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        run_grpcbench("serve", "grpclib", timeout=0.5)
