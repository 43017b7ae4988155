"""The wire stream's state machine: each transition only from the states it lists."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

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
            with pytest.raises(states.StreamStateError, match=f"{re.escape(name)} is not allowed"):
                _apply(name, stream)
            assert stream.state == state  # a refused event changes nothing


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


def test_a_forbidden_transition_is_refused_under_python_dash_o_too() -> None:
    """Not an assert: ``python -O`` keeps the check."""
    probe = (
        "from grpcbench.wire import stream as s\n"
        "from grpcbench.wire.headers import request_fields\n"
        "st = s.WireStream(request_fields('/a.B/C', 'h:1', 'http', 1.0), b'', False,"
        " lambda x: None, 1)\n"
        "try:\n    s.end_sent(st)\nexcept s.StreamStateError as e:\n    print('refused', e.code)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-O", "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert ran.stdout.strip() == "refused 2"  # INTERNAL_ERROR: the connection ends


def test_every_inline_transition_is_one_the_table_allows() -> None:
    """The hot paths that set a state inline say which transition they take; each must
    be in the table, and nothing else in the transport may set a state."""
    wire = Path(states.__file__).parent
    marked = re.compile(r"stream\.state = (\w+)\s+# transition: (\S+) from (\w+)$")
    found = []
    for path in sorted(wire.glob("*.py")):
        if path.name == "stream.py":
            continue
        for line in path.read_text().splitlines():
            if re.search(r"\.state = ", line):
                match = marked.search(line.strip())
                assert match, f"{path.name}: a state set outside the table: {line.strip()}"
                target, event, source = match.groups()
                assert states.NEXT[getattr(states, source), event] == getattr(states, target)
                found.append(event)
    assert sorted(found) == ["finish", "opened(END_STREAM)", "opened(END_STREAM)"]
