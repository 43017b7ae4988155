"""How late a wire call's deadline fires (``nox -s deadlines``).

Calls of 1 to 10 ms to a peer that never answers, on asyncio and on uvloop: each
ends DeadlineExceeded, and how long after its deadline it ended is printed (median,
p90 and worst, in ms). The test suite asserts only what load cannot move (the
connection's timer is due at the call's deadline; no call ends before it): this
is the figure, measured where a busy machine shows as what it is.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import uvloop

from grpcbench.wire import status
from grpcbench.wire.connection import Connection
from grpcbench.wire.headers import request_fields
from grpcbench.wire.stream import WireStream


class _Silent(asyncio.Transport):
    """A peer that takes every byte and never answers."""

    def write(self, data: bytes | bytearray | memoryview) -> None:
        pass

    def writelines(self, data: object) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def abort(self) -> None:
        pass

    def close(self) -> None:
        pass

    def get_extra_info(self, name: str, default: object = None) -> object:
        return default


async def lateness_ms(rounds: int) -> list[float]:
    connection = Connection()
    connection.connection_made(_Silent())
    connection._settings([])
    late = []
    for timeout in (0.001, 0.002, 0.003, 0.005, 0.01) * rounds:
        ended: asyncio.Future[float] = asyncio.get_running_loop().create_future()

        def on_done(_: WireStream, ended: asyncio.Future[float] = ended) -> None:
            ended.set_result(time.perf_counter())

        start = time.perf_counter()
        stream = WireStream(
            request_fields("/a.B/C", "127.0.0.1:1", "http", timeout), b"\x00" * 5, True,
            on_done, start + timeout,
        )  # fmt: skip
        connection.start(stream)
        late.append((await ended - start - timeout) * 1e3)
        assert stream.status == status.DEADLINE_EXCEEDED, stream.status
    connection.abort()
    return late


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="calls per timeout per loop")
    args = parser.parse_args()
    for name, run in (("asyncio", asyncio.run), ("uvloop", uvloop.run)):
        late = sorted(run(lateness_ms(args.rounds)))
        print(
            f"{name:8} {len(late)} deadlines: late by median {statistics.median(late):.3f} ms,"
            f" p90 {late[int(len(late) * 0.9)]:.3f} ms, worst {late[-1]:.3f} ms;"
            f" early: {sum(v < 0 for v in late)}"
        )


if __name__ == "__main__":
    main()
