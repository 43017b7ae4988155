"""Metadata and a deadline on the reflection service's requests.

A server that authenticates every call, reflection included, answers the
reflection stream only with credentials (ghz's ``--reflect-metadata``); and a
server that takes the call and never answers must not hang ``list``, ``describe``
or a run. grpc's reflection client takes neither metadata nor a timeout, so a
client interceptor adds both to every call on the channel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import grpc


class _Details(NamedTuple):
    method: str
    timeout: float | None
    metadata: Any
    credentials: Any
    wait_for_ready: Any
    compression: Any


class _AddMetadata(grpc.UnaryUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    def __init__(self, pairs: list[tuple[str, str]], timeout_s: float) -> None:
        self.pairs = pairs
        self.timeout_s = timeout_s

    def _details(self, details: Any) -> Any:
        metadata = list(details.metadata or ()) + self.pairs
        timeout = details.timeout if details.timeout is not None else self.timeout_s
        return _ClientCallDetails(
            details.method, timeout, metadata or None, details.credentials,
            getattr(details, "wait_for_ready", None), getattr(details, "compression", None),
        )  # fmt: skip

    def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any,
                              request: Any) -> Any:  # fmt: skip
        return continuation(self._details(details), request)

    def intercept_stream_stream(self, continuation: Callable[..., Any], details: Any,
                                requests: Iterator[Any]) -> Any:  # fmt: skip
        return continuation(self._details(details), requests)


class _ClientCallDetails(_Details, grpc.ClientCallDetails):
    pass


def with_metadata(
    channel: grpc.Channel, metadata: Mapping[str, Any], timeout_s: float
) -> grpc.Channel:
    """``channel`` with ``metadata`` on every call, and ``timeout_s`` as the deadline of
    every call that has none."""
    pairs = [(str(key).lower(), str(value)) for key, value in metadata.items()]
    return grpc.intercept_channel(channel, _AddMetadata(pairs, timeout_s))
