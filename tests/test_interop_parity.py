"""wire = grpc on grpc-go's interop TestService, a server nobody here wrote.

`nox -s parity` builds benchmarks/interop_go (grpc-go's own TestService
implementation, ``interop.NewTestServer``, served with the options its stock
command line lacks: MAX_CONCURRENT_STREAMS, windows, a message limit, a
keepalive policy) and names it in ``GRPCBENCH_INTEROP_GO``. Every case sends the
same calls through grpc.aio and through wire and asserts the same statuses and
messages (and replies, where there are any). Without the binary the suite is
skipped, never faked: the Python server kinds are covered by
tests/test_wire_differential.py and the raw replies by tests/test_wire_hostile.py.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
import pytest

from grpcbench.rpc.client_options import ClientOptions
from grpcbench.rpc.schema import MethodSchema
from grpcbench.rpc.security import PLAINTEXT
from grpcbench.wire.channel import WireChannel

pytestmark = pytest.mark.integration

BINARY = os.environ.get("GRPCBENCH_INTEROP_GO", "")
SERVICE = "grpc.testing.TestService"


@pytest.fixture(scope="module")
def protoset(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    if not BINARY:
        pytest.skip("GRPCBENCH_INTEROP_GO is not set: nox -s parity builds grpc-go's server")
    path = tmp_path_factory.mktemp("interop") / "testing.protoset"
    subprocess.run([BINARY, "-protoset", str(path)], check=True, timeout=60)
    return path.read_bytes()


@contextmanager
def interop_server(*options: str) -> Iterator[str]:
    process = subprocess.Popen([BINARY, "-port", "0", *options], stdout=subprocess.PIPE,
                               text=True)  # fmt: skip
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.kill()
        process.wait(10)


Call = Callable[[Any], Awaitable[str]]


def both(address: str, client: ClientOptions, main: Callable[[Any], Awaitable[Any]]) -> list[Any]:
    """``main(channel)`` on a grpc.aio channel and on a wire channel, in that order."""

    async def on(stack: str) -> Any:
        if stack == "grpc":  # grpcbench's grpc.aio channel, with the run's options
            channel: Any = PLAINTEXT.aio_channel(address, client)
        else:
            channel = WireChannel(address, client=client)
        try:
            return await asyncio.wait_for(main(channel), 60)
        finally:
            await channel.close()

    return [asyncio.run(on(stack)) for stack in ("grpc", "wire")]


def outcome(call: Awaitable[Any]) -> Awaitable[str]:
    async def run() -> str:
        try:
            reply = await call
            return f"OK {len(reply or b'')}"
        except grpc.aio.AioRpcError as error:
            return f"{error.code().name}: {error.details()}"

    return run()


def unary(protoset: bytes, method: str = "UnaryCall") -> tuple[Any, str]:
    schema = MethodSchema(f"{SERVICE}/{method}", protoset)
    return schema.request_class, schema.path


@pytest.mark.parametrize("code", range(17))
def test_every_status_with_a_unicode_message(protoset: bytes, code: int) -> None:
    request, path = unary(protoset)
    body = request(response_status={"code": code, "message": f"état {code} ✓ \t%"})

    async def main(channel: Any) -> str:
        return await outcome(channel.unary_unary(path)(body.SerializeToString(), timeout=10))

    with interop_server() as address:
        grpc_says, wire_says = both(address, ClientOptions(), main)
    assert grpc_says == wire_says


@pytest.mark.parametrize("size", [1, 1 << 20, 4 << 20, 8 << 20])
def test_large_replies_and_the_size_limit(protoset: bytes, size: int) -> None:
    """Replies of 1 B to 8 MB arrive whole on both stacks; over a 4 MiB
    --max-recv-message-size both say ResourceExhausted in grpc's words."""
    request, path = unary(protoset)
    body = request(response_size=size, response_compressed={"value": size > 1})

    async def main(channel: Any) -> list[str]:
        method = channel.unary_unary(path)
        return [await outcome(method(body.SerializeToString(), timeout=30)) for _ in range(3)]

    with interop_server() as address:
        assert len(set(map(str, both(address, ClientOptions(), main)))) == 1
        limited = ClientOptions(max_recv_bytes=4 << 20)
        grpc_says, wire_says = both(address, limited, main) if size > 4 << 20 else (1, 1)
    assert grpc_says == wire_says


def test_one_stream_at_a_time_through_a_small_window(protoset: bytes) -> None:
    """MAX_CONCURRENT_STREAMS 1 and 64 KB windows: 20 calls of 1 MB each, all OK."""
    request, path = unary(protoset)
    body = request(response_size=1 << 20).SerializeToString()

    async def main(channel: Any) -> Counter[str]:
        method = channel.unary_unary(path)
        return Counter(
            await asyncio.gather(*(outcome(method(body, timeout=30)) for _ in range(20)))
        )

    with interop_server("-max-streams", "1", "-window", "65536") as address:
        grpc_says, wire_says = both(address, ClientOptions(), main)
    assert grpc_says == wire_says and set(grpc_says) == {f"OK {(1 << 20) + 8}"}


def test_a_request_over_the_servers_limit(protoset: bytes) -> None:
    request, path = unary(protoset)
    body = request(payload={"body": b"x" * (2 << 20)}).SerializeToString()

    async def main(channel: Any) -> str:
        return await outcome(channel.unary_unary(path)(body, timeout=10))

    with interop_server("-max-recv", str(1 << 20)) as address:
        grpc_says, wire_says = both(address, ClientOptions(), main)
    assert grpc_says == wire_says and grpc_says.startswith("RESOURCE_EXHAUSTED")


def test_keepalive_under_grpc_go_s_default_policy(protoset: bytes) -> None:
    """--keepalive 1s against grpc-go's enforcement (5 minutes between pings, none
    without calls): grpc throttles its pings (gRFC A8), so its calls stay OK; so do
    wire's."""
    request, path = unary(protoset)
    body = request(response_size=10).SerializeToString()

    async def main(channel: Any) -> Counter[str]:
        method = channel.unary_unary(path)
        seen: Counter[str] = Counter()
        for _ in range(6):
            seen.update(
                await asyncio.gather(*(outcome(method(body, timeout=10)) for _ in range(5)))
            )
            await asyncio.sleep(0.5)
        return seen

    with interop_server("-keepalive-min-time", "5m") as address:
        grpc_says, wire_says = both(address, ClientOptions(keepalive_s=1.0), main)
    assert grpc_says == wire_says and sum(grpc_says.values()) == 30
    assert all(key.startswith("OK") for key in grpc_says)


def test_a_server_side_deadline_on_a_stream(protoset: bytes) -> None:
    """StreamingOutputCall with replies 50 ms apart and a 120 ms deadline: grpc-go
    resets each stream with CANCEL when its deadline fires, after ours; the wire stack
    ends every call DeadlineExceeded, as grpc does when its deadline timer is on time."""
    schema = MethodSchema(f"{SERVICE}/StreamingOutputCall", protoset)
    body = schema.request_class(
        response_parameters=[{"size": 10, "interval_us": 50_000} for _ in range(10)]
    ).SerializeToString()

    async def main(channel: Any) -> Counter[str]:
        method = channel.unary_stream(schema.path)

        async def one() -> str:
            try:
                async for _ in method(body, timeout=0.12):
                    pass
                return "OK"
            except grpc.aio.AioRpcError as error:
                return error.code().name

        return Counter(await asyncio.gather(*(one() for _ in range(20))))

    with interop_server() as address:
        grpc_says, wire_says = both(address, ClientOptions(), main)
    assert wire_says == Counter({"DEADLINE_EXCEEDED": 20})
    # grpc says the same when its own deadline timer runs on time; on a loaded machine
    # it reads the server's reset first and says CANCELLED (seen: 1 to 19 of 20).
    assert set(grpc_says) <= {"DEADLINE_EXCEEDED", "CANCELLED"}, grpc_says
