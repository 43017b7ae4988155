"""Where results are written: never over a device or pipe, through a symlink to its
target, and a destination that fails mid-run (a full disk) does not stop the run."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.model.results import RunRecord
from grpcbench.report import exporters
from grpcbench.report.exporters import Exports, Output, check_writable
from tests.conftest import GRPCBENCH


def test_a_device_or_a_pipe_is_never_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (Path("/dev/null"), Path("/dev/full"), fifo):
        with pytest.raises(UsageError, match="not a regular file"):
            check_writable("--output", path)
    assert Path("/dev/full").is_char_device() and fifo.is_fifo()


def test_output_on_dev_full_is_one_line_before_anything_starts() -> None:
    result = subprocess.run(
        [*GRPCBENCH, "run", "--load", "fake", "-s", "grpclib", "-o", "/dev/full", "--dry-run"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "grpcbench: error: --output /dev/full: not a regular file (a device, pipe or socket);"
        " results go to a file"
    ]


def test_a_symlink_is_written_through(tmp_path: Path) -> None:
    target = tmp_path / "target.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    (output,) = Exports((Output("json", link),)).outputs
    assert output.path == target.resolve()


def test_an_output_that_fails_mid_run_is_said_once_and_the_others_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full, fine = tmp_path / "full.json", tmp_path / "fine.md"
    written: list[Path] = []

    def write(path: Path, data: bytes) -> None:
        if path == full:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(path)

    monkeypatch.setattr(exporters, "load_reference", lambda reference: lambda record: b"x")
    monkeypatch.setattr(exporters, "write_atomically", write)
    exports = Exports((Output("json", full), Output("markdown", fine)))
    said: list[str] = []
    exports.on_failure = said.append
    record = RunRecord.__new__(RunRecord)
    for _ in range(3):  # three levels
        exports.after_level(record)
    assert exports.at_end(record) == [fine]
    assert said == [f"cannot write --output {full}: No space left on device (the run goes on)"]
    assert list(exports.failed.values()) == [
        f"cannot write --output {full}: No space left on device"
    ]
    assert written.count(fine) == 4


@pytest.mark.integration  # it starts a server
def test_standard_output_is_treated_as_a_unix_tool_treats_it(tmp_path: Path) -> None:
    """A reader that went away (``| head -1``): quiet, 141 as SIGPIPE would give, and the
    results file still written; one that cannot take more (/dev/full): one line, 2."""
    out = tmp_path / "r.json"
    run = subprocess.Popen(
        [*GRPCBENCH, "run", "--load", "fake", "-s", "grpclib", "-c", "2", "-n", "10",
         "--no-pin", "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert run.stdout is not None and run.stderr is not None
    run.stdout.readline()
    run.stdout.close()
    stderr = run.stderr.read()
    assert run.wait(timeout=120) == 141, stderr
    assert "Traceback" not in stderr and "error" not in stderr
    assert json.loads(out.read_text())["status"] == "complete"
    with open("/dev/full", "w") as full:
        listed = subprocess.run(
            [*GRPCBENCH, "scenarios"], stdout=full, stderr=subprocess.PIPE, text=True,
            timeout=60, check=False,
        )  # fmt: skip
    assert listed.returncode == 2
    assert listed.stderr.strip().splitlines() == [
        "grpcbench: error: cannot write the output: No space left on device"
    ]


@pytest.mark.integration
def test_a_run_prints_only_its_own_lines(tmp_path: Path) -> None:
    """Every line a run prints on stderr is grpcbench's own: the plan, each server's
    start, each level's line, the files written. Nothing of a library's (asyncio said
    "Loop ... that handles pid ... is closed" whenever --report's charts kept the run
    going after its last generator was closed but not yet reaped)."""
    pytest.importorskip("matplotlib")
    outputs = ["--report", "r.html", "--output", "r.json", "--markdown", "r.md"]
    result = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpclib", "-c", "2", "-n", "200", "--warmup", "0", *outputs],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    ours = (
        r"scenario hello: .*", r"grpclib: starting", r"grpclib: ready on 127\.0\.0\.1:\d+ .*",
        r"  concurrency 2 \[builtin\]: 200 calls, .*", r"wrote r\.(html|json|md)", r"",
    )  # fmt: skip
    foreign = [
        line for line in result.stderr.splitlines()
        if not any(re.fullmatch(shape, line) for shape in ours)
    ]  # fmt: skip
    assert not foreign, result.stderr
