"""Sampling a server with py-spy (the ``profile`` extra) over a level's measured phase.

py-spy attaches from outside (ptrace), so the server runs unmodified; it runs
``--nonblocking`` (it never pauses the server to read a stack, which keeps the
overhead low) with ``--subprocesses`` (every process of ``grpcio:processes=N``),
from the moment the driver reports the measured phase until the level ends,
when SIGINT makes it write its collapsed stacks. Whether this machine lets a
process attach to its sibling is checked once, before the first level, the
same way: one clear line with the reason and the fix when it does not.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from grpcbench.errors import UsageError
from grpcbench.profile.model import Profile, ProfileSettings
from grpcbench.profile.stacks import top_functions
from grpcbench.subprocs import Child, start_child, tethered_argv

WRITE_TIMEOUT_S = 30.0  # py-spy writes its file on SIGINT
PTRACE_FIX = (
    "run grpcbench as root or give it CAP_SYS_PTRACE (a container: --cap-add SYS_PTRACE),"
    " or allow it with: sysctl kernel.yama.ptrace_scope=0"
)


def py_spy() -> str:
    """The py-spy program: on PATH, or beside this Python (a venv's bin)."""
    found = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if found is None:
        raise UsageError("--profile needs py-spy: pip install 'grpcbench[profile]'")
    return found


def check_attach() -> None:
    """Attach to a sibling process as the recorder will; refused is one line with the fix."""
    program = py_spy()
    sibling = subprocess.Popen([sys.executable, "-P", "-c", "import time; time.sleep(60)"])
    try:
        argv = tethered_argv([program, "dump", "--pid", str(sibling.pid)])
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    finally:
        sibling.kill()
        sibling.wait()
    if done.returncode != 0:
        reason = " ".join((done.stderr or done.stdout).split())[:200] or f"exit {done.returncode}"
        raise UsageError(
            f"--profile cannot attach py-spy to a process here ({reason}): {PTRACE_FIX}"
        )


class Recorder:
    """py-spy recording one server (and its subprocesses) until ``stop``."""

    def __init__(self, settings: ProfileSettings, pid: int, path: Path) -> None:
        self.settings = settings
        self.pid = pid
        self.path = path
        self.child: Child | None = None

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        argv = [py_spy(), "record", "--pid", str(self.pid), "--rate", str(self.settings.rate_hz),
                "--format", "raw", "--output", str(self.path), "--nonblocking",
                "--subprocesses"]  # fmt: skip
        argv += ["--native"] if self.settings.native else []
        argv += ["--idle"] if self.settings.idle else []
        self.child = await start_child(argv)

    async def stop(self) -> Profile | None:
        """SIGINT (py-spy then writes the file); None when it wrote nothing."""
        child = self.child
        if child is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            child.process.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(child.process.wait(), WRITE_TIMEOUT_S)
        except TimeoutError:
            await child.stop(signal.SIGKILL)
        if not self.path.exists():
            return None
        samples, top = top_functions(self.path)
        return Profile(str(self.path), self.settings.rate_hz, samples, tuple(top))
