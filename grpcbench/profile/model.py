"""What ``--profile`` is set to, and what it found in one cell: plain data, so the
options and the results can hold it without importing py-spy's runner."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grpcbench.profile.stacks import FunctionShare

DEFAULT_RATE_HZ = 100


@dataclass(frozen=True)
class ProfileSettings:
    """``--profile``'s settings, and where the per-cell stack files go."""

    directory: Path
    rate_hz: int = DEFAULT_RATE_HZ
    native: bool = False  # C frames too (grpcio's core)
    idle: bool = False  # samples of idle threads too
    generator: bool = False  # --profile generator: the built-in generator's processes too

    @classmethod
    def beside(
        cls, output: Path | None, rate_hz: int, native: bool, idle: bool, generator: bool
    ) -> ProfileSettings:
        """Stacks go beside the results file (``r.json`` -> ``r.profiles``), or to a new
        directory in the current one."""
        if output:
            directory = Path(output).with_suffix(".profiles")
        else:
            directory = Path(f"grpcbench-profiles-{time.strftime('%Y%m%d-%H%M%S')}")
        return cls(directory.resolve(), rate_hz, native, idle, generator)

    def to_json(self) -> dict[str, Any]:
        return {"directory": str(self.directory), "rate_hz": self.rate_hz,
                "native": self.native, "idle": self.idle,
                "generator": self.generator}  # fmt: skip


@dataclass(frozen=True)
class Profile:
    """One cell's profile: its collapsed-stack file (and the same samples as a
    speedscope file) and what took the samples."""

    file: str
    rate_hz: int
    samples: int
    top: tuple[FunctionShare, ...]
    speedscope: str | None = None  # absent in files from before speedscope output
    native: bool = False  # C frames sampled too (--profile-native)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file, "rate_hz": self.rate_hz, "samples": self.samples,
            "top": [share.to_json() for share in self.top], "native": self.native,
            **({"speedscope": self.speedscope} if self.speedscope else {}),
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Profile:
        return cls(
            str(data["file"]), int(data["rate_hz"]), int(data["samples"]),
            tuple(FunctionShare.from_json(t) for t in data.get("top") or ()),
            data.get("speedscope"), bool(data.get("native", False)),
        )  # fmt: skip
