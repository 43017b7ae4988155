"""Whether a gRPC server answers at an address, on the channel that will use it.

The check watches the channel's connectivity: READY is an answer; the first
TRANSIENT_FAILURE (or the timeout) is diagnosed at once - a TCP connect says
refused or unresolvable, a TLS probe says plaintext/TLS mismatch - instead of
waiting out grpc's reconnect back-off. No connection is opened only to look:
the check runs on the channel that then makes the pre-flight call (or, with
--no-preflight, on one channel closed after it), so a server that counts
connections sees at most one before the load (ghz makes none; the conformance
suite and docs/own-service.md say so).
"""

from __future__ import annotations

import asyncio
import time

import grpc

from grpcbench.base.errors import PreflightError, UsageError
from grpcbench.base.parsing import parse_host_port
from grpcbench.rpc.security import ChannelSecurity, tls_failure

READY = grpc.ChannelConnectivity.READY
FAILED = (grpc.ChannelConnectivity.TRANSIENT_FAILURE, grpc.ChannelConnectivity.SHUTDOWN)


async def wait_ready(
    channel: grpc.aio.Channel, address: str, security: ChannelSecurity, timeout_s: float
) -> None:
    """Return once ``channel`` is connected; else raise one line naming why."""
    deadline = time.monotonic() + timeout_s
    state = channel.get_state(try_to_connect=True)
    while state is not READY:
        left = deadline - time.monotonic()
        if state in FAILED or left <= 0:
            raise await _unreachable(address, security, timeout_s)
        try:
            await asyncio.wait_for(channel.wait_for_state_change(state), left)
        except TimeoutError:
            raise await _unreachable(address, security, timeout_s) from None
        state = channel.get_state(try_to_connect=True)


async def _unreachable(
    address: str, security: ChannelSecurity, timeout_s: float
) -> UsageError | PreflightError:
    """Why nothing gRPC answers: the TCP connect's error, a TLS mismatch, or the time."""
    host, port = parse_host_port(address)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    except TimeoutError:
        return UsageError(
            f"cannot reach target {address} (no TCP connection within {timeout_s:.0f}s)"
        )
    except ConnectionRefusedError:
        return UsageError(
            f"cannot reach target {address}: connection refused (nothing listens there)"
        )
    except OSError as error:
        return UsageError(f"cannot reach target {address}: {error.strerror or error}")
    writer.close()
    failure = await tls_failure(address, security)
    if failure:
        return PreflightError(failure)
    return UsageError(f"cannot reach target {address} (no connection within {timeout_s:.0f}s)")
