"""The client's allocations per call (--client-allocations), as results keep them.

The tracing itself runs in ``load.allocations``; this is only its saved figure."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ClientAllocations:
    calls: int  # traced calls
    ok: int  # of which ended OK
    bytes_per_call: float
    allocations_per_call: float
    tool: str  # "memray 1.20.0"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientAllocations:
        return cls(
            calls=int(data["calls"]),
            ok=int(data["ok"]),
            bytes_per_call=float(data["bytes_per_call"]),
            allocations_per_call=float(data["allocations_per_call"]),
            tool=str(data.get("tool", "memray")),
        )
