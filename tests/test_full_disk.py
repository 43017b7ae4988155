"""A full disk under each output: a real tmpfs, mounted for the run alone.

`unshare --user --map-root-user --mount` gives the run a mount namespace of its own, so
no root is needed and nothing outside sees the mount. Each cell fills the tmpfs, runs
a short level with one output on it, and asserts docs/lifecycle.md's row for exit 2:
the failure is said once while the run goes on, the command ends with 2 in one line
naming the option, and no half-written file (nor a temporary one) is left.
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
    script = (
        f"mount -t tmpfs -o size=16k tmpfs {shlex.quote(str(mount))}"
        f" && (dd if=/dev/zero of={shlex.quote(str(mount / 'fill'))} bs=1k count=64 2>/dev/null;"
        f" true) && {run} >/dev/null; code=$?; ls -a {shlex.quote(str(mount))}; exit $code"
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
