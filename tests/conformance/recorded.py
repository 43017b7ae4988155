"""What a recording says a client did, as the facts the conformance suites compare.

``facts`` turns one client's recording (tests/support/recording_proxy.py) into
named aspects - calls, request messages, metadata, compression, deadlines,
``:authority``, SNI, connections - normalised where two correct clients may
differ (a worker's id, a timestamp's digits, a deadline's microseconds).
``differing`` names the aspects in which two clients' facts differ.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections import Counter
from typing import Any

from google.protobuf import descriptor_pool, json_format, message_factory

from tests.support.recording_proxy import SeenConnection, SeenStream

REFLECTION = "/grpc.reflection."
# Headers every client adds itself: not what a command line asked for.
TRANSPORT = {"user-agent", "te", "content-type", "grpc-accept-encoding", "grpc-encoding",
             "grpc-timeout"}  # fmt: skip
# Template output that differs between two runs: compared by shape.
VARYING = ("Timestamp", "UUID", "newUUID", "randomString", "randAlpha", "randNumeric")
WORKER = re.compile(r"g\d+c\d+")
TIMEOUT_UNITS = {"H": 3600.0, "M": 60.0, "S": 1.0, "m": 1e-3, "u": 1e-6, "n": 1e-9}


def _shape(text: str) -> str:
    """Letters and digits as run lengths: two renderings of one template compare."""
    return re.sub(r"[0-9A-Za-z]+", lambda m: f"<{len(m.group())}>", text)


class Decoder:
    """Request messages as JSON text, by their method's input type."""

    def __init__(self, pool: descriptor_pool.DescriptorPool, varying: bool) -> None:
        self.pool = pool
        self.varying = varying

    def normal(self, text: str) -> str:
        text = WORKER.sub("<worker>", text)
        return _shape(text) if self.varying else text

    def message(self, stream: SeenStream, compressed: bool, body: bytes) -> str:
        if compressed:
            body = gzip.decompress(body)
        service, _, method = stream.path.lstrip("/").partition("/")
        try:
            found = self.pool.FindServiceByName(service).FindMethodByName(method)
        except KeyError:  # a service the server does not serve: the bytes as they are
            return body.hex()
        message = message_factory.GetMessageClass(found.input_type)()
        message.ParseFromString(body)
        return json_format.MessageToJson(message, indent=None, sort_keys=True)


def _seconds(timeout: str | None) -> float | None:
    if not timeout:
        return None
    return int(timeout[:-1]) * TIMEOUT_UNITS[timeout[-1]]


def facts(connections: list[SeenConnection], decoder: Decoder, counted: bool) -> dict[str, Any]:
    """The aspects of one client's traffic. ``counted``: the number of calls is
    the command line's (-n); a timed line (-z, -x) compares what was sent as sets."""
    calls = [(c, s) for c in connections for s in c.streams if not s.path.startswith(REFLECTION)]
    load = [c for c in connections if any(not s.path.startswith(REFLECTION) for s in c.streams)]

    def many(items: list[str]) -> Counter[str] | set[str]:
        return Counter(items) if counted else set(items)

    # A call the client abandoned before its request left sent no message to compare:
    # HEADERS, then a reset or nothing. A timed line's last calls are cut by its end; and
    # a server that answers at the headers (Unimplemented) can beat any client's DATA
    # frame, which grpc-go then resets (CI on d5fa57f: 1 of ghz's 20 calls). They still
    # count as calls.
    cut = {id(s) for _, s in calls if not s.messages and (s.reset or not s.ended)}
    decoded = [[decoder.message(s, compressed, body) for compressed, body in s.messages]
               for _, s in calls if id(s) not in cut]  # fmt: skip
    sent = [json.dumps(messages) for messages in decoded]
    messages = many([decoder.normal(text) for text in sent])
    metadata = many([
        decoder.normal(json.dumps({k: v for k, v in sorted(s.headers.items())
                                   if not k.startswith(":") and k not in TRANSPORT}))
        for _, s in calls
    ])  # fmt: skip
    deadlines = {_seconds(s.headers.get("grpc-timeout")) for _, s in calls}
    text = " ".join([*sent, *(v for _, s in calls for v in s.headers.values())])
    return {
        "calls": len(calls) if counted else len(calls) > 0,
        "methods": {s.path for _, s in calls},
        "messages": messages,
        "metadata": metadata,
        "workers": len(set(WORKER.findall(text))),
        # whether a stream's messages were one rendering (--stream-dynamic-messages: not)
        "one-rendering": {len(set(messages)) == 1 for messages in decoded if len(messages) > 1},
        "compression": {(s.headers.get("grpc-encoding"), any(f for f, _ in s.messages))
                        for _, s in calls},  # fmt: skip
        "deadline": {None if d is None else math.ceil(d) for d in deadlines},
        "authority": {s.headers.get(":authority") for _, s in calls},
        "sni": {c.sni for c in load},
        "connections": len(load),
        "idle-connections": len([c for c in connections if not c.streams]),
        "reflection": len([c for c in connections
                           if any(s.path.startswith(REFLECTION) for s in c.streams)]),
    }  # fmt: skip


def differing(ours: dict[str, Any], theirs: dict[str, Any]) -> set[str]:
    return {aspect for aspect in theirs if ours[aspect] != theirs[aspect]}
