"""How the client's channels behave beyond TLS: ghz's channel flags, on both stacks.

``--authority``, ``--keepalive``, ``-e`` (gzip requests) and the message size
limits are load settings (``plan.LoadSettings``, declared once); this is the
part of them a channel reads, so the wire transport, grpc.aio channels and the
pre-flight call all apply the same ones, and the ghz driver passes them on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grpcbench.base import defaults
from grpcbench.base.parsing import LARGEST_SIZE


@dataclass(frozen=True)
class ClientOptions:
    authority: str = ""  # "" = the target's address (or --cname with TLS)
    keepalive_s: float = 0.0  # 0 = no PING of our own
    gzip: bool = False  # requests compressed, grpc-encoding: gzip
    max_recv_bytes: int = defaults.MAX_RECV_BYTES  # 0 = no limit on a reply message
    max_send_bytes: int = 0  # 0 = no limit on a request message

    @classmethod
    def of(cls, settings: Any) -> ClientOptions:
        """From ``plan.LoadSettings`` (or anything with the same fields)."""
        return cls(
            authority=settings.authority,
            keepalive_s=settings.keepalive_s,
            gzip=settings.gzip,
            max_recv_bytes=settings.max_recv_bytes,
            max_send_bytes=settings.max_send_bytes,
        )

    def grpc_options(self) -> list[tuple[str, Any]]:
        """The same, as grpc channel arguments (added to rpc.security's)."""
        options: list[tuple[str, Any]] = []
        if self.authority:
            options.append(("grpc.default_authority", self.authority))
        if self.keepalive_s:
            options.append(("grpc.keepalive_time_ms", int(self.keepalive_s * 1000)))
            options.append(("grpc.keepalive_permit_without_calls", 1))
        options.append(("grpc.max_receive_message_length", self.max_recv_bytes or -1))
        if self.max_send_bytes:
            options.append(("grpc.max_send_message_length", self.max_send_bytes))
        return options

    def ghz_flags(self) -> list[str]:
        """The same, as ghz's flags."""
        flags = []
        if self.authority:
            flags.append(f"--authority={self.authority}")
        if self.keepalive_s:
            flags.append(f"--keepalive={max(1, round(self.keepalive_s * 1000))}ms")
        if self.gzip:
            flags.append("--enable-compression")
        if self.max_recv_bytes != defaults.MAX_RECV_BYTES:  # ghz's default is grpc's too
            # ghz has no "no limit": the largest size grpc takes stands for it.
            flags.append(f"--max-recv-message-size={self.max_recv_bytes or LARGEST_SIZE}")
        if self.max_send_bytes:
            flags.append(f"--max-send-message-size={self.max_send_bytes}")
        return flags


DEFAULT = ClientOptions()
