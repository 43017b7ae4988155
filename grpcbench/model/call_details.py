"""Per-call records (ghz's ``details``): when each call started, how long it took, how it ended.

The HDR histograms stay the source of every percentile; these records exist for
the formats that list calls one by one (ghz's ``-O json``, ``csv`` and
``influx-details``). They are kept only when such a format is asked for, and at
most ``DETAIL_LIMIT`` per generator, ghz's own limit. A record costs about 21
bytes (two 64-bit integers, a status byte and a message index), so a million
calls hold about 21 MB.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

# ghz's runner keeps at most this many per-call records (runner/reporter.go, maxResult).
DETAIL_LIMIT = 1_000_000


@dataclass
class CallDetails:
    """Parallel arrays, one entry per call, in the order the calls finished."""

    started_ns: array[int] = field(default_factory=lambda: array("q"))  # Unix epoch ns
    latency_ns: array[int] = field(default_factory=lambda: array("q"))
    status: array[int] = field(default_factory=lambda: array("B"))  # index into statuses
    message: array[int] = field(default_factory=lambda: array("I"))  # index into messages
    statuses: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=lambda: [""])
    limit: int = DETAIL_LIMIT
    dropped: int = 0  # calls past the limit: counted, not listed
    _places: dict[str, dict[str, int]] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.latency_ns)

    def add(self, started_ns: int, latency_ns: int, status: str, message: str) -> None:
        if len(self.latency_ns) >= self.limit:
            self.dropped += 1
            return
        self.started_ns.append(started_ns)
        self.latency_ns.append(latency_ns)
        self.status.append(self._place("statuses", status))
        self.message.append(self._place("messages", message) if message else 0)

    def _place(self, name: str, value: str) -> int:
        """``value``'s index in the table ``name``, appended when new (found through a
        dict: a message carrying a request id is new on every call)."""
        table: list[str] = getattr(self, name)
        places = self._places.setdefault(name, {})
        if not places and table:
            places.update((text, i) for i, text in enumerate(table))
        place = places.get(value)
        if place is None:
            place = places[value] = len(table)
            table.append(value)
        return place

    def rows(self) -> list[tuple[int, int, str, str]]:
        """(started_ns, latency_ns, status, message) per call, by start time."""
        rows = [
            (start, latency, self.statuses[status], self.messages[message])
            for start, latency, status, message in zip(
                self.started_ns, self.latency_ns, self.status, self.message, strict=True
            )
        ]
        rows.sort(key=lambda row: row[0])
        return rows

    def merge(self, other: CallDetails) -> CallDetails:
        """Both generators' records (each kept its own up to the limit)."""
        merged = CallDetails(limit=self.limit + other.limit, dropped=self.dropped + other.dropped)
        for source in (self, other):
            for start, latency, status, message in source.rows():
                merged.add(start, latency, status, message)
        return merged

    def to_json(self) -> dict[str, Any]:
        return {
            "started_ns": self.started_ns.tolist(),
            "latency_ns": self.latency_ns.tolist(),
            "status": self.status.tolist(),
            "message": self.message.tolist(),
            "statuses": self.statuses,
            "messages": self.messages,
            "limit": self.limit,
            "dropped": self.dropped,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CallDetails:
        return cls(
            started_ns=array("q", data["started_ns"]),
            latency_ns=array("q", data["latency_ns"]),
            status=array("B", data["status"]),
            message=array("I", data["message"]),
            statuses=[str(s) for s in data["statuses"]],
            messages=[str(m) for m in data["messages"]],
            limit=int(data.get("limit", DETAIL_LIMIT)),
            dropped=int(data.get("dropped", 0)),
        )
