"""Seed 004's store (``services.watch``): folders of key-value pairs, with every
response built once per cache mode, shared by the three server kinds' servicers."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

from grpcbench.proto import watch_pb2

VALUE_SIZES = {"small": 500, "medium": 5_000, "large": 50_000}
DEFAULT_PAIRS = 1000
DEFAULT_FOLDERS = ("small", "medium", "large")
SERIALIZED = watch_pb2.CacheMode.SERIALIZED
FRAME = watch_pb2.CacheMode.FRAME
TWO_WRITES = watch_pb2.CacheMode.TWO_WRITES


def folder_pairs(folder: str, pairs: int, seed: int = 0) -> list[tuple[str, bytes]]:
    rng = random.Random(f"{seed}:{folder}")
    size = VALUE_SIZES[folder]
    return [(f"/{folder}/key-{index:05d}", rng.randbytes(size)) for index in range(pairs)]


def frame_prefix(payload: bytes) -> bytes:
    """gRPC's length prefix: not compressed (one byte), then the length (4 bytes, big-endian)."""
    return b"\x00" + len(payload).to_bytes(4, "big")


class FolderCache:
    """The store: objects, every response pre-serialized, and (``frames``, for
    grpclib) every response as a whole gRPC frame."""

    def __init__(self, params: Mapping[str, Any], frames: bool = False) -> None:
        pairs = int(params.get("pairs", DEFAULT_PAIRS))
        folders = [str(f) for f in params.get("folders", DEFAULT_FOLDERS)]
        unknown = [f for f in folders if f not in VALUE_SIZES]
        if unknown:
            raise ValueError(f"unknown folders {unknown} (known: {', '.join(VALUE_SIZES)})")
        self.objects = {folder: folder_pairs(folder, pairs) for folder in folders}
        self.mono = {name: self.mono_message(name).SerializeToString() for name in self.objects}
        self.separated = {
            name: [m.SerializeToString() for m in self.separated_messages(name)]
            for name in self.objects
        }
        # Built once, like the seed's frame cache (memory is the price: a second copy).
        self.mono_frames = (
            {name: frame_prefix(payload) + payload for name, payload in self.mono.items()}
            if frames
            else {}
        )
        self.separated_frames = (
            {
                name: [frame_prefix(payload) + payload for payload in payloads]
                for name, payloads in self.separated.items()
            }
            if frames
            else {}
        )

    def writes(self, request: watch_pb2.WatchRequest, separated: bool) -> list[tuple[bytes, ...]]:
        """FRAME and TWO_WRITES: per message, the bytes to write (one or two writes)."""
        payloads = self.separated[request.folder] if separated else [self.mono[request.folder]]
        if request.cache == FRAME:
            if separated:
                return [(frame,) for frame in self.separated_frames[request.folder]]
            return [(self.mono_frames[request.folder],)]
        return [(frame_prefix(payload), payload) for payload in payloads]

    def mono_message(self, folder: str) -> watch_pb2.WatchResponse:
        return watch_pb2.WatchResponse(
            kv=[
                watch_pb2.KV(key=key, value=value, revision=index + 1)
                for index, (key, value) in enumerate(self.objects[folder])
            ]
        )

    def separated_messages(self, folder: str) -> Iterator[watch_pb2.SeparatedWatchResponse]:
        pairs = self.objects[folder]
        for index, (key, value) in enumerate(pairs):
            yield watch_pb2.SeparatedWatchResponse(
                part=index + 1,
                parts=len(pairs),
                kv=watch_pb2.KV(key=key, value=value, revision=index + 1),
            )

    def watch(self, request: watch_pb2.WatchRequest) -> watch_pb2.WatchResponse | bytes:
        if request.cache == SERIALIZED:
            serialized: bytes = self.mono[request.folder]
            return serialized
        message: watch_pb2.WatchResponse = self.mono_message(request.folder)
        return message

    def watch_separated(
        self, request: watch_pb2.WatchRequest
    ) -> Iterator[watch_pb2.SeparatedWatchResponse | bytes]:
        if request.cache == SERIALIZED:
            return iter(self.separated[request.folder])
        return self.separated_messages(request.folder)


def serialize(message: Any) -> bytes:
    """grpcio: pre-serialized responses pass through, messages are serialized."""
    return message if isinstance(message, bytes) else message.SerializeToString()


NOT_FRAMING = "not available on this kind: C-core writes the frames (grpclib only)"
