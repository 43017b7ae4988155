"""One real call before the first level, so a run never measures 200 of 200 failures.

A wrong method, missing credentials or a TLS mismatch would otherwise make
every call of every level fail, and the tables would measure only how fast a
server says no. The pre-flight call uses the level's own workload (the same
request and metadata) and turns each failure into one line naming its cause.
"""

from __future__ import annotations

import asyncio

import grpc

from grpcbench.base.errors import PreflightError
from grpcbench.base.secrets import redact
from grpcbench.contract.calls import Workload, WorkloadError
from grpcbench.rpc.client_options import DEFAULT, ClientOptions
from grpcbench.rpc.reachability import wait_ready
from grpcbench.rpc.security import ChannelSecurity, tls_failure
from grpcbench.rpc.status_names import status_name

# PreflightError lives in errors and tls_failure in rpc.security (lower layers); both
# stay importable from here.
__all__ = ["PreflightError", "explain", "tls_failure"]
# How long the target has to accept the pre-flight call's connection, unless
# --connect-timeout says (ghz's default dial timeout).
READY_TIMEOUT_S = 10.0


async def explain(error: grpc.aio.AioRpcError, address: str, security: ChannelSecurity,
                  what: str) -> str:  # fmt: skip
    code = error.code()
    details = redact(error.details() or "")
    status = f"{status_name(code)}: {details}" if details else status_name(code)
    if code is grpc.StatusCode.UNIMPLEMENTED:
        return f"the target does not implement {what} ({status})"
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return (
            f"the target refused {what} ({status}): give credentials as metadata,"
            " e.g. -m authorization='Bearer TOKEN', or -M FILE"
        )
    if code is grpc.StatusCode.UNAVAILABLE:
        failure = await tls_failure(address, security, details)
        if failure and (not security.tls or "handshake" in details.lower()
                        or "ssl" in details.lower() or "verif" in details.lower()):  # fmt: skip
            return failure
    return f"the pre-flight call of {what} failed ({status})"


def _own_size_limit(error: grpc.aio.AioRpcError, client: ClientOptions) -> bool:
    """The call failed on the run's own --max-recv/--max-send-message-size: a status
    the user provoked on purpose, which the levels measure (as ghz does), not a fault."""
    limited = client.max_recv_bytes or client.max_send_bytes
    return bool(limited) and error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED


async def preflight(
    address: str,
    security: ChannelSecurity,
    workload: Workload,
    what: str,
    timeout_s: float,
    expected: tuple[str, ...] = ("OK",),
    client: ClientOptions = DEFAULT,
    connect_timeout_s: float = READY_TIMEOUT_S,
) -> None:
    """One call with the real request; a failure is a ``PreflightError`` naming the cause.
    ``expected``: the statuses that count as success (--expect-status); ``client``: the
    run's channel options (--authority, -e, ...), so the call is the level's own."""
    channel = security.aio_channel(address, client)
    try:
        # The target answers, on this channel: a refused address or a TLS mismatch
        # is said at once and no connection is opened only to look (rpc.reachability).
        await wait_ready(channel, address, security, connect_timeout_s)
        call = workload.bind(channel)
        try:
            await asyncio.wait_for(call(timeout_s), timeout_s + 1.0)
        except grpc.aio.AioRpcError as error:
            if status_name(error.code()) in expected or _own_size_limit(error, client):
                return
            raise PreflightError(await explain(error, address, security, what)) from None
        except TimeoutError:
            raise PreflightError(
                f"the pre-flight call of {what} did not finish within {timeout_s:g}s (--timeout)"
            ) from None
        except WorkloadError as error:
            if error.status in expected:
                return
            raise PreflightError(
                f"the pre-flight call of {what} {error.preflight_verb}: {error}"
            ) from None
        if "OK" not in expected:
            raise PreflightError(
                f"the pre-flight call of {what} ended OK, not {', '.join(expected)}"
                " (--expect-status; add OK to it if both are expected)"
            )
    finally:
        await channel.close()
