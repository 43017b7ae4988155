"""Catalogue of the built-in generator's client stacks (``--client-stack``).

A stack is what opens a connection and makes calls on it: grpcbench's own HTTP/2
transport (``wire``) or grpc.aio (``grpcio``, the reference). Only metadata lives
here; the channel's code is imported when a level opens one. What a stack can do
is declared on its entry (``callback_loops``), so the load engine asks the entry,
never the stack's name. Adding a stack is a channel class with ``channel_ready``,
``close`` and the multi-callables workloads bind to, plus one entry: below, or a
plugin's ``grpcbench.client_stacks`` entry point (``base.plugins``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.plugins import Registry
from grpcbench.base.references import load_reference
from grpcbench.rpc.client_options import DEFAULT, ClientOptions
from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity


@dataclass(frozen=True)
class ClientStackInfo:
    name: str
    description: str
    # "module:callable" taking (target, security, connect_timeout_s, client) -> a channel.
    channel: str
    # Runs a workload's ``unary_plan()`` on ``load.callback_loops`` (no coroutine per call).
    callback_loops: bool = False


def aio_channel(
    target: str, security: ChannelSecurity, connect_timeout_s: float, client: ClientOptions
) -> Any:
    """A grpc.aio channel (grpc bounds its own connection attempts)."""
    return security.aio_channel(target, client)


CLIENT_STACKS: Registry[ClientStackInfo] = Registry(
    "grpcbench.client_stacks",
    ClientStackInfo,
    (
        ClientStackInfo(
            "wire",
            "grpcbench's own HTTP/2 frames, a few us of CPU per call",
            "grpcbench.wire.channel:WireChannel",
            callback_loops=True,
        ),
        ClientStackInfo(
            "grpcio", "grpc.aio, the reference", "grpcbench.rpc.client_stacks:aio_channel"
        ),
    ),
)


def stack_info(name: str) -> ClientStackInfo:
    if name not in CLIENT_STACKS:
        raise UsageError(f"unknown client stack {name!r} (known: {', '.join(CLIENT_STACKS)})")
    return CLIENT_STACKS[name]


def open_stack_channel(
    name: str,
    target: str,
    security: ChannelSecurity = PLAINTEXT,
    connect_timeout_s: float = 10.0,
    client: ClientOptions = DEFAULT,
) -> Any:
    """A connection of its own on client stack ``name``."""
    return load_reference(stack_info(name).channel)(target, security, connect_timeout_s, client)


def stacks_help() -> str:
    listed = "; ".join(f"{info.name} ({info.description})" for info in CLIENT_STACKS.values())
    return f"The built-in generator's gRPC client: {listed}."


def known_stack(name: str) -> str | None:
    """A setting's check: None for a known stack, else what is expected."""
    return None if name in CLIENT_STACKS else " or ".join(CLIENT_STACKS)
