"""Sampling a server with py-spy (the ``profile`` extra) over a level's measured phase.

py-spy attaches from outside (ptrace), so the server runs unmodified; it runs
``--nonblocking`` (it never pauses the server to read a stack, which keeps the
overhead low; ``--profile-native`` needs the pause, so it pauses) with
``--subprocesses`` (every process of ``grpcio:processes=N``), from the moment
the driver reports the measured phase until the level ends, when SIGINT makes
it write its collapsed stacks. Whether this machine lets a
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
from collections.abc import Sequence
from pathlib import Path

from grpcbench.base.errors import UsageError
from grpcbench.base.processes import Child, start_child, tethered_argv
from grpcbench.profile.model import Profile, ProfileSettings
from grpcbench.profile.speedscope import write_speedscope
from grpcbench.profile.stacks import top_functions

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
    """py-spy recording some processes (and their subprocesses) until ``stop``: one
    server, or each of the built-in generator's processes (``--profile generator``),
    whose stacks are joined into one file (collapsed stacks add up line by line)."""

    def __init__(
        self, settings: ProfileSettings, pids: Sequence[int], path: Path, cpus: Sequence[int] = ()
    ) -> None:
        self.settings = settings
        self.pids = tuple(pids)
        self.path = path
        self.cpus = tuple(cpus)  # the instrument's CPUs (the generator's), not the server's
        self.children: list[tuple[Child, Path]] = []
        self.failure: str | None = None  # why nothing was written (py-spy's own words)

    def _part(self, index: int) -> Path:
        return self.path if len(self.pids) == 1 else self.path.with_suffix(f".part{index}")

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for index, pid in enumerate(self.pids):
            part = self._part(index)
            argv = [py_spy(), "record", "--pid", str(pid), "--rate", str(self.settings.rate_hz),
                    "--format", "raw", "--output", str(part), "--subprocesses"]  # fmt: skip
            # py-spy reads native stacks only with the process paused for each sample.
            argv += ["--native"] if self.settings.native else ["--nonblocking"]
            argv += ["--idle"] if self.settings.idle else []
            self.children.append((await start_child(argv, self.cpus), part))

    async def stop(self) -> Profile | None:
        """SIGINT (py-spy then writes its file); None when nothing was written."""
        ended = [_ended_early(child) for child, _ in self.children]  # killed, crashed
        for child, _ in self.children:
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(signal.SIGINT)
        for child, _ in self.children:
            try:
                await asyncio.wait_for(child.process.wait(), WRITE_TIMEOUT_S)
            except TimeoutError:
                await child.stop(signal.SIGKILL)
        parts = [part for _, part in self.children if part.exists()]
        if parts and parts != [self.path]:
            texts = [part.read_text(errors="replace") for part in parts]
            self.path.write_text("".join(t if t.endswith("\n") else t + "\n" for t in texts if t))
            for part in parts:
                part.unlink()
        if not self.path.exists():
            said = [child.stderr_tail(3) for child, _ in self.children]
            reason = " ".join(" ".join([*filter(None, ended), *said]).split())[:200]
            self.failure = reason or "it said nothing"
            return None
        samples, top = top_functions(self.path)
        speedscope = write_speedscope(self.path, self.path.stem, self.settings.rate_hz)
        return Profile(
            str(self.path), self.settings.rate_hz, samples, tuple(top), str(speedscope),
            self.settings.native,
        )  # fmt: skip


def _ended_early(child: Child) -> str:
    """How a py-spy that ended before it was told to stop ended ("" if it runs on)."""
    code = child.process.returncode
    if code is None:
        return ""
    if code >= 0:
        return f"py-spy (pid {child.pid}) exited with code {code} before the level ended."
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"py-spy (pid {child.pid}) was killed by {name} before the level ended."
