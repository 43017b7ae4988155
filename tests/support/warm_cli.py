"""``python -m grpcbench`` as a real process, without paying its imports each time.

Most command-line tests start grpcbench to see what a user sees: exit code, stdout,
stderr, no traceback. Importing grpc, protobuf, rich and typer costs ~0.35 s of the
~0.4 s such a run takes, a hundred times per suite. A *zygote* imports them once, per
test worker, and forks a fresh child per command: the child is still its own process
(own exit code, own file descriptors, own signal handlers and event loop), only its
imports were done before its argv was known.

The zygote is single-threaded and never creates a grpc channel or an event loop, so
forking it is safe. Runs that need something a preloaded import would hide (another
environment, stdin) go to a plain subprocess instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

PRELOAD = ("grpcbench.cli.app", "grpcbench.cli.commands", "grpc", "grpclib.client")
# The zygotes this test process started: children of its own that no test leaked.
ZYGOTES: set[int] = set()


def _child(request: dict[str, Any]) -> int:
    """In the forked child: become ``python -m grpcbench ARGS`` and run."""
    os.setpgrp()  # so a timeout can stop it and whatever it started
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, name, mode in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY),
                           (2, request["stderr"], os.O_WRONLY)):  # fmt: skip
        target = os.open(name, mode)
        os.dup2(target, fd)
        os.close(target)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.argv = [sys.executable, *request["argv"]]
    from grpcbench.cli.app import main

    try:
        main()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, int | None):
            print(stop.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - what the interpreter would do, then exit 1
        import traceback

        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return code


def serve() -> None:
    """The zygote: one JSON request per line on stdin, one JSON reply per line."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    replies = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        replies.flush()
        pid = os.fork()
        if pid == 0:
            os._exit(_child(request))
        print(json.dumps({"pid": pid}), file=replies, flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), file=replies, flush=True)


def _import_time_environment(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(("PYTHON", "GRPC_"))}


class Zygote:
    """One warm grpcbench per test worker; ``run`` is ``subprocess.run``'s shape."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._environment: dict[str, str] = {}

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-P", __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            self._environment = _import_time_environment(dict(os.environ))
            ZYGOTES.add(self._process.pid)
        return self._process

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def can_run(self, env: dict[str, str]) -> bool:
        """Whether a child of this zygote is what a fresh process would be under ``env``:
        what the preloaded modules read at import (the path, grpc's settings) must match."""
        if self._process is None:
            return True
        return _import_time_environment(env) == self._environment

    def run(
        self, argv: list[str], timeout: float, cwd: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``python -m grpcbench ARGV`` under the current environment."""
        with self._lock, tempfile.TemporaryDirectory(prefix="warm-cli-") as scratch:
            out, err = Path(scratch, "stdout"), Path(scratch, "stderr")
            out.touch()
            err.touch()
            process = self._started()
            assert process.stdin is not None and process.stdout is not None
            request = {
                "argv": argv, "cwd": cwd or os.getcwd(), "env": dict(os.environ),
                "stdout": str(out), "stderr": str(err),
            }  # fmt: skip
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            pid = json.loads(process.stdout.readline())["pid"]
            status = _await_status(process.stdout, pid, timeout)
            completed = subprocess.CompletedProcess(
                [sys.executable, "-m", "grpcbench", *argv], status, out.read_text(), err.read_text()
            )
        if status is None:
            raise subprocess.TimeoutExpired(
                completed.args, timeout, completed.stdout, completed.stderr
            )
        return completed

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


def _await_status(replies: IO[str], pid: int, timeout: float) -> int | None:
    """The child's exit code, or None after killing its process group at the timeout."""
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        status = int(json.loads(replies.readline())["status"])
    finally:
        timer.cancel()
    return None if killed.is_set() else status


if __name__ == "__main__":
    serve()
