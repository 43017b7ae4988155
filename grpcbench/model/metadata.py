"""What is needed to reproduce (or distrust) a run: versions, machine, time."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Collection
from typing import Any

from grpcbench import __version__
from grpcbench.base.secrets import redact_argv

PACKAGES = ("grpcio", "grpclib", "uvloop", "protobuf", "hdrhistogram", "psutil", "h2")


def package_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version  # on the first use, not at import

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def versions_line() -> str:
    """``grpcbench --version``: what a bug report needs (the results file records the same)."""
    python = sys.version.split()[0]
    shown = ("grpcio", "grpclib", "h2", "protobuf", "uvloop")  # h2: grpclib's HTTP/2 (seed 002)
    others = ", ".join(f"{name} {package_version(name) or 'not installed'}" for name in shown)
    return f"grpcbench {__version__} (Python {python}; {others})"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def collect_metadata(
    secret_params: Collection[str] = (), secret_options: Collection[str] = ()
) -> dict[str, Any]:
    """``secret_params``: parameter names whose values the saved command line masks;
    ``secret_options``: every spelling of an option declared secret, likewise."""
    return {
        "grpcbench": __version__,
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "packages": {name: package_version(name) for name in PACKAGES},
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model(),
        "hostname": platform.node(),
        "argv": redact_argv(sys.argv, secret_params, secret_options),
        "git": git_state(),
    }


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=2, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state() -> dict[str, Any] | None:
    """The commit, branch and dirty flag of the git work tree the run starts in (the
    code under test, as a store's history orders it); None outside one, without git,
    or before a first commit. One git call, bounded to 2 s, at every run's start."""
    status = _git("status", "--porcelain=v2", "--branch", "--untracked-files=no")
    if status is None:
        return None
    heads = dict(
        line[2:].split(" ", 1) for line in status.splitlines() if line.startswith("# branch.")
    )
    commit = heads.get("branch.oid", "(initial)")
    if commit == "(initial)":
        return None
    branch = heads.get("branch.head")
    return {
        "commit": commit,
        "branch": None if branch in (None, "(detached)") else branch,
        "dirty": any(not line.startswith("#") for line in status.splitlines()),
    }
