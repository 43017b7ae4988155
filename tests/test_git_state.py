"""What every results file records of the git work tree it ran in (metadata.git)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from grpcbench.model.metadata import git_state

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git")


def _git(where: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=where,
                   check=True, capture_output=True)  # fmt: skip


def test_commit_branch_and_dirty_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert git_state() is None  # not a work tree
    _git(tmp_path, "init", "-q", "-b", "trunk")
    assert git_state() is None  # no commit yet
    (tmp_path / "f").write_text("a")
    _git(tmp_path, "add", "f")
    _git(tmp_path, "commit", "-q", "-m", "one")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    assert git_state() == {"commit": head, "branch": "trunk", "dirty": False}
    (tmp_path / "untracked").write_text("x")
    assert git_state() == {"commit": head, "branch": "trunk", "dirty": False}
    (tmp_path / "f").write_text("b")
    assert git_state() == {"commit": head, "branch": "trunk", "dirty": True}
    _git(tmp_path, "checkout", "-q", "--detach")
    assert git_state() == {"commit": head, "branch": None, "dirty": True}
