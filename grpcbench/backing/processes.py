"""Start a backing-service process, wait for its READY line, stop it for sure."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import IO

from grpcbench.childproc import child_environment, set_parent_death_signal
from grpcbench.errors import UsageError

READY_TIMEOUT_S = 60.0


@contextlib.contextmanager
def ready_process(name: str, argv: Sequence[str]) -> Iterator[int]:
    """Run ``argv`` until the context ends; yields the port from its ``READY <port>`` line."""
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=child_environment(),
        preexec_fn=set_parent_death_signal if os.name == "posix" else None,
    )
    try:
        yield _wait_ready(name, process, stderr)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            with contextlib.suppress(OSError):
                process.stdin.close()  # type: ignore[union-attr]
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        stderr.close()


def _wait_ready(name: str, process: subprocess.Popen[bytes], stderr: IO[bytes]) -> int:
    assert process.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT_S
    buffer = b""
    while time.monotonic() < deadline:
        readable, _, _ = select.select([process.stdout], [], [], 0.2)
        if readable:
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                break
            buffer += chunk
            for line in buffer.splitlines():
                if line.startswith(b"READY "):
                    return int(line.split()[1])
        elif process.poll() is not None:
            break
    stderr.seek(0)
    tail = "\n".join(stderr.read().decode(errors="replace").strip().splitlines()[-8:])
    raise UsageError(
        f"the embedded {name} did not start" + (f"; its stderr:\n{tail}" if tail else "")
    )
