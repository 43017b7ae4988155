"""A full disk under each output: a real tmpfs, mounted for the run alone.

`unshare --user --map-root-user --mount` gives the run a mount namespace of its own, so
no root is needed and nothing outside sees the mount. Each cell fills the tmpfs, runs
a short level with one output on it, and asserts docs/lifecycle.md's row for exit 2:
the failure is said once while the run goes on, the command ends with 2 in one line
naming the option, and no half-written file (nor a temporary one) is left. And a stop
signal held while the results are written, one of them on the full disk: the signal's
exit code, and a line that names what was not written.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GRPCBENCH

pytestmark = pytest.mark.integration

# Each output option, and the file it is given (on the full tmpfs).
OUTPUTS = {
    "--output": "r.json",
    "--markdown": "r.md",
    "--csv": "r.csv",
    "--report": "r.html",
    "--debug": "d.log",
}


def _unshare() -> str:
    found = shutil.which("unshare")
    if found is None:
        pytest.skip("no unshare (util-linux)")
    tried = subprocess.run([found, "-rm", "true"], capture_output=True, text=True, check=False)
    if tried.returncode != 0:
        pytest.skip(f"no user and mount namespaces here: {tried.stderr.strip()}")
    return found


def _full_disk_script(mount: Path, then: str) -> str:
    """Mount a 16 KiB tmpfs on ``mount``, fill it, then run ``then`` (a shell line)."""
    return (
        f"mount -t tmpfs -o size=16k tmpfs {shlex.quote(str(mount))}"
        f" && (dd if=/dev/zero of={shlex.quote(str(mount / 'fill'))} bs=1k count=64 2>/dev/null;"
        f" true) && {then}"
    )


@pytest.mark.parametrize("option", list(OUTPUTS))
def test_a_full_disk_under_each_output_is_one_line_and_exit_2(option: str, tmp_path: Path) -> None:
    if option == "--report":
        pytest.importorskip("matplotlib")
    unshare = _unshare()
    mount = tmp_path / "full"
    mount.mkdir()
    path = mount / OUTPUTS[option]
    run = shlex.join(
        [*GRPCBENCH, "run", "--load", "fake", "-s", "grpclib", "-c", "2", "-n", "10",
         "--no-pin", option, str(path)]
    )  # fmt: skip
    script = _full_disk_script(
        mount, f"{run} >/dev/null; code=$?; ls -a {shlex.quote(str(mount))}; exit $code"
    )
    done = subprocess.run(
        [unshare, "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("grpcbench: error:")]
    assert errors == [f"grpcbench: error: cannot write {option} {path}: No space left on device"]
    assert f"warning: cannot write {option} {path}" in done.stderr  # said when it happened
    left = set(done.stdout.split()) - {".", "..", "fill"}
    if option == "--debug":
        assert left <= {OUTPUTS[option]}  # a log is written line by line: what fitted
    else:
        assert not left, left  # neither the output half-written nor its temporary file


def test_a_signal_held_while_writing_to_a_full_disk_names_what_was_not_written(
    tmp_path: Path,
) -> None:
    """SIGTERM while the results are written (held until they all are), one of them on a
    full disk: grpcbench exits 143 and its line names the output it could not write,
    never "every output written"; the others are written whole."""
    import json
    import signal
    import time

    pytest.importorskip("matplotlib")  # --report's charts: the second that the signal hits
    unshare = _unshare()
    mount, log = tmp_path / "full", tmp_path / "debug.log"
    mount.mkdir()
    report, out, markdown = mount / "r.html", tmp_path / "r.json", tmp_path / "r.md"
    run = shlex.join(
        [*GRPCBENCH, "run", "--load", "fake", "-s", "grpclib", "-c", "2", "-n", "10", "--no-pin",
         "--debug", str(log), "--report", str(report), "--output", str(out),
         "--markdown", str(markdown)]
    )  # fmt: skip
    script = _full_disk_script(mount, f"exec {run} >/dev/null")
    process = subprocess.Popen(
        [unshare, "-rm", "sh", "-c", script], stderr=subprocess.PIPE, text=True
    )  # unshare and sh exec: the pid is grpcbench's
    deadline = time.monotonic() + 60
    while not (log.exists() and " end:" in log.read_text()):
        assert process.poll() is None and time.monotonic() < deadline, "no end of the run"
        time.sleep(0.02)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr, stderr
    [said] = [line for line in stderr.splitlines() if line.startswith("interrupted")]
    assert f"cannot write --report {report}: No space left on device" in said, said
    assert "every output written" not in said
    assert json.loads(out.read_text())["status"] == "complete"
    assert markdown.read_text().strip()


def test_an_output_on_a_full_disk_beside_a_debug_log_is_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    """The failure said after the run's --debug log was closed: one line and exit 2 (it
    was an internal error, exit 70: the warning went to the closed log)."""
    unshare = _unshare()
    mount = tmp_path / "full"
    mount.mkdir()
    run = shlex.join(
        [*GRPCBENCH, "run", "--load", "fake", "-s", "grpclib", "-c", "2", "-n", "10", "--no-pin",
         "--debug", str(tmp_path / "d.log"), "--output", str(mount / "r.json")]
    )  # fmt: skip
    script = _full_disk_script(mount, f"{run} >/dev/null")
    done = subprocess.run(
        [unshare, "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("grpcbench: error:")]
    assert errors == [
        f"grpcbench: error: cannot write --output {mount / 'r.json'}: No space left on device"
    ]
    assert (tmp_path / "d.log").read_text().splitlines()[-1].endswith("end: done")
