"""A flame graph's tree from collapsed stacks: what the HTML report draws.

Frames are merged by function (``profile.stacks.function_of``: no line numbers,
so one function called from two lines is one box), and a run of frames of one
library (grpcio, grpclib, h2, asyncio, ...) becomes one box named after it, so
the graph shows where user code sits between the libraries instead of forty
frames of one event loop. Boxes under ``MIN_SHARE`` of the samples are dropped
(their samples stay in their parent's width), which keeps an embedded report
small whatever the sampling rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpcbench.profile.stacks import function_of, read_stacks

MIN_SHARE = 0.001  # boxes under 0.1% of the samples are not drawn


@dataclass
class FlameNode:
    name: str
    value: int = 0  # samples with this box on the stack
    children: dict[str, FlameNode] = field(default_factory=dict)

    def to_json(self, total: int) -> dict[str, Any]:
        kept = [c for c in self.children.values() if c.value >= total * MIN_SHARE]
        kept.sort(key=lambda c: c.value, reverse=True)
        data: dict[str, Any] = {"n": self.name, "v": self.value}
        if kept:
            data["c"] = [child.to_json(total) for child in kept]
        return data


def box_names(frames: list[str]) -> list[str]:
    """One stack's boxes: functions, runs of one library's frames as one box, and a
    process frame as ``process PID`` (its command line is in the run's metadata)."""
    boxes: list[str] = []
    for frame in frames:
        name = frame.split(":", 1)[0] if frame.startswith("process ") else function_of(frame)
        if boxes and name == boxes[-1] and name.startswith("["):
            continue  # the same library's internals go on
        boxes.append(name)
    return boxes


def flame_tree(lines: list[str], title: str = "all samples") -> FlameNode:
    root = FlameNode(title)
    for frames, count in read_stacks(lines):
        root.value += count
        node = root
        for name in box_names(frames):
            node = node.children.setdefault(name, FlameNode(name))
            node.value += count
    return root


def flame_json(path: Path, title: str) -> dict[str, Any] | None:
    """The tree of a collapsed-stack file, ready to embed; None when it is gone."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    root = flame_tree(lines, title)
    return root.to_json(root.value) if root.value else None
