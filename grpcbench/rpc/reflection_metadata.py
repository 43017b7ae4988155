"""Metadata on the reflection service's requests (ghz's ``--reflect-metadata``).

A server that authenticates every call, reflection included, answers the
reflection stream only with credentials; grpc's reflection client takes no
metadata, so a client interceptor adds it to every call on the channel.
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
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    def _details(self, details: Any) -> Any:
        metadata = list(details.metadata or ()) + self.pairs
        return _ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials,
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


def with_metadata(channel: grpc.Channel, metadata: Mapping[str, Any]) -> grpc.Channel:
    """``channel`` with ``metadata`` on every call (itself when there is none)."""
    if not metadata:
        return channel
    pairs = [(str(key).lower(), str(value)) for key, value in metadata.items()]
    return grpc.intercept_channel(channel, _AddMetadata(pairs))
