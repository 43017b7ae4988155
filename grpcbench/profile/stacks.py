"""Collapsed stacks (py-spy's ``--format raw``): which functions took the samples.

A line is ``frame;frame;...;leaf COUNT`` with frames like ``name (path:line)``.
Functions are named without their line (``name (module path)``), and frames of
grpcio, grpclib, h2, asyncio, uvloop and the thread pool are folded into one
frame per library ("[grpclib internals]"), so the top of the table names code
somebody can act on rather than twenty frames of one event loop.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Path fragment -> the library its frames fold into.
INTERNALS = (
    ("/grpc/_cython/", "grpcio"), ("/grpc/aio/", "grpcio"), ("/grpc/_server", "grpcio"),
    ("/grpc/", "grpcio"), ("/grpclib/", "grpclib"), ("/h2/", "h2"), ("/hpack/", "h2"),
    ("/asyncio/", "asyncio"), ("/uvloop/", "uvloop"), ("/concurrent/futures/", "thread pool"),
    ("threading.py", "thread pool"), ("/selectors.py", "asyncio"),
    ("/_asynciomodule.c", "asyncio"),  # --profile-native: asyncio's C tasks
)  # fmt: skip
_FRAME = re.compile(r"^(?P<name>.*?) \((?P<path>[^():]*)(?::\d+)?\)$")
# py-spy --nonblocking reads a stack while it changes: now and then a frame comes back torn.
TORN_FRAME = "[torn frame (read while it changed)]"
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]+$")


def function_of(frame: str) -> str:
    """``burn (app/work.py:12)`` -> ``burn (app/work.py)``; library frames -> their library."""
    if _UNPRINTABLE.search(frame):
        return TORN_FRAME
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    path = match.group("path")
    if _ADDRESS.match(match.group("name")):  # --profile-native, a library without symbols
        return f"[{_short(path)}, no symbols]"
    rooted = "/" + path  # py-spy often shows paths relative to sys.path
    for fragment, library in INTERNALS:
        if fragment in rooted:
            return f"[{library} internals]"
    return f"{match.group('name')} ({_short(path)})"


def _short(path: str) -> str:
    """The last two parts of a path: enough to tell modules apart, short in a table."""
    parts = path.split("/")
    return "/".join(parts[-2:])


@dataclass(frozen=True)
class FunctionShare:
    function: str
    self_share: float  # of all samples, with this function the innermost frame
    total_share: float  # of all samples, with this function anywhere on the stack

    def to_json(self) -> dict[str, Any]:
        return {"function": self.function, "self": self.self_share, "total": self.total_share}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FunctionShare:
        return cls(str(data["function"]), float(data["self"]), float(data["total"]))


def read_stacks(lines: Iterable[str]) -> list[tuple[list[str], int]]:
    """(frames, samples) per line; lines that are not stacks are skipped."""
    stacks = []
    for line in lines:
        text, _, count = line.rstrip().rpartition(" ")
        if text and count.isdecimal():
            stacks.append((text.split(";"), int(count)))
    return stacks


def function_shares(path: Path) -> tuple[int, list[FunctionShare]]:
    """Samples in a collapsed-stack file, and every function's shares, by self share
    (then total)."""
    stacks = read_stacks(path.read_text(errors="replace").splitlines())
    samples = sum(count for _, count in stacks)
    own: Counter[str] = Counter()
    anywhere: Counter[str] = Counter()
    for frames, count in stacks:
        functions = [function_of(frame) for frame in frames if not frame.startswith("process ")]
        if not functions:
            continue
        own[functions[-1]] += count
        for function in set(functions):
            anywhere[function] += count
    if not samples:
        return 0, []
    ranked = sorted(anywhere, key=lambda f: (own[f], anywhere[f]), reverse=True)
    return samples, [FunctionShare(f, own[f] / samples, anywhere[f] / samples) for f in ranked]


def top_functions(path: Path, limit: int = 10) -> tuple[int, list[FunctionShare]]:
    """Samples in a collapsed-stack file, and its first ``limit`` functions."""
    samples, shares = function_shares(path)
    return samples, shares[:limit]
