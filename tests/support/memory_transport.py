"""A transport in memory for the wire connection's tests: keeps what is written."""

from __future__ import annotations


class MemoryTransport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def writelines(self, pieces: list[bytes | memoryview]) -> None:
        self.written.append(b"".join(pieces))  # as asyncio's own transports do

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = True

    def get_extra_info(self, name: str) -> None:
        return None
