"""The wire stream's state machine: each transition only from the states it lists."""

from __future__ import annotations

import asyncio

import pytest

from grpcbench.wire import stream as states
from grpcbench.wire.connection import Connection
from grpcbench.wire.headers import request_fields
from grpcbench.wire.stream import WireStream
from tests.support.memory_transport import MemoryTransport

ALL = (states.IDLE, states.OPEN, states.HALF_CLOSED_LOCAL, states.CLOSED)


def _stream(state: int) -> WireStream:
    stream = WireStream(request_fields("/a.B/C", "h:1", "http", 1.0), b"", False, lambda s: None, 1)
    stream.state = state
    return stream


def _apply(name: str, stream: WireStream) -> None:
    connection = Connection.__new__(Connection)
    {
        "opened": lambda: states.opened(stream, 1, connection, False),
        "opened(END_STREAM)": lambda: states.opened(stream, 1, connection, True),
        "end_sent": lambda: states.end_sent(stream),
        "requeued": lambda: states.requeued(stream),
        "finish": lambda: states.finish(stream, 0),
    }[name]()


@pytest.mark.parametrize("name", sorted(states.TRANSITIONS))
def test_each_transition_leads_where_the_table_says_and_only_from_where_it_says(
    name: str,
) -> None:
    sources, target = states.TRANSITIONS[name]
    for state in ALL:
        stream = _stream(state)
        if state in sources:
            _apply(name, stream)
            assert stream.state == target
        elif name == "finish":  # a second ending is ignored, never a second on_done
            _apply(name, stream)
            assert stream.state == states.CLOSED
        else:
            with pytest.raises(AssertionError):
                _apply(name, stream)


def test_a_request_stream_walks_idle_open_half_closed_closed() -> None:
    async def main() -> list[int]:
        connection = Connection()
        transport = MemoryTransport()
        connection.connection_made(transport)  # type: ignore[arg-type]
        seen: list[int] = []
        stream = _stream(states.IDLE)
        seen.append(stream.state)
        connection.start(stream)
        seen.append(stream.state)  # HEADERS, the request open
        connection.send(stream, b"\0\0\0\0\0", True)
        seen.append(stream.state)
        connection.cancel(stream, 1, "done here")
        seen.append(stream.state)
        return seen

    assert asyncio.run(main()) == list(ALL)
