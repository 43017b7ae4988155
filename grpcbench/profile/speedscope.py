"""Collapsed stacks as a speedscope file (https://www.speedscope.app/file-format-schema.json).

py-spy records once, in its raw collapsed format (what the terminal tables and
the report's flame graphs read); this writes the same samples as speedscope's
"sampled" profile, so a cell opens in speedscope.app (left-heavy and sandwich
views) without a second recording. Frames keep their file and line here: this
is the file for digging, the folded names are for reading.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from grpcbench import __version__
from grpcbench.profile.stacks import read_stacks

SCHEMA = "https://www.speedscope.app/file-format-schema.json"
_FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def _frame(text: str) -> dict[str, Any]:
    match = _FRAME.match(text.strip())
    if not match:
        return {"name": text.strip()}
    frame: dict[str, Any] = {"name": match.group("name"), "file": match.group("file")}
    if match.group("line"):
        frame["line"] = int(match.group("line"))
    return frame


def speedscope_document(lines: list[str], name: str, rate_hz: int) -> dict[str, Any]:
    """One sampled profile; weights are sample counts (``unit`` none: py-spy's
    nonblocking sampling does not time each sample, ``rate_hz`` converts)."""
    frames: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    samples: list[list[int]] = []
    weights: list[int] = []
    for stack, count in read_stacks(lines):
        ids = []
        for text in stack:
            if text not in index:
                index[text] = len(frames)
                frames.append(_frame(text))
            ids.append(index[text])
        samples.append(ids)
        weights.append(count)
    return {
        "$schema": SCHEMA,
        "shared": {"frames": frames},
        "profiles": [
            {
                "type": "sampled",
                "name": f"{name} ({rate_hz} Hz)",
                "unit": "none",
                "startValue": 0,
                "endValue": sum(weights),
                "samples": samples,
                "weights": weights,
            }
        ],  # fmt: skip
        "name": name,
        "activeProfileIndex": 0,
        "exporter": f"grpcbench {__version__}",
    }


def write_speedscope(folded: Path, name: str, rate_hz: int) -> Path:
    """``cell.folded`` -> ``cell.speedscope.json`` beside it."""
    target = folded.with_suffix(".speedscope.json")
    lines = folded.read_text(errors="replace").splitlines()
    target.write_text(json.dumps(speedscope_document(lines, name, rate_hz)))
    return target
