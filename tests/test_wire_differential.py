"""The wire transport against grpc.aio, the reference, on every server kind.

The same calls go through both client stacks; statuses, message counts,
bytes and the replies themselves must be identical. The servers run the
tests' own echo service (examples/echo: one method of each RPC kind) on
each kind grpcbench starts, and over TLS (``--cacert``/``--cname``, ``--skipTLS``).
A Go server is compared too when ``GRPCBENCH_GO_GREETER`` names one
(``nox -s loadgen`` builds it; it is never built at install).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2

from grpcbench.load.calls import open_channel
from grpcbench.load.engine import run_level
from grpcbench.model.load_result import LoadResult
from grpcbench.rpc.call import MethodCall
from grpcbench.rpc.schema import MethodSchema
from grpcbench.rpc.security import PLAINTEXT, ChannelSecurity
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from tests.support.echo_server import (
    EXAMPLE,
    SERVER_NAME,
    Certificates,
    echo_pb2,
    echo_server,
    make_certificates,
)
from tests.support.factories import make_spec

pytestmark = pytest.mark.integration

STACKS = ("grpcio", "wire")
KINDS = (
    "grpcio:workers=2",
    "grpcio:workers=2,processes=2",
    "grpclib",
    "grpclib+uvloop",
    "grpcio-aio",
    "grpcio-aio+uvloop",
)
TOKEN = "differential-secret"
BEARER = (("authorization", f"Bearer {TOKEN}"),)


def _request(message: str, repeat: int = 0) -> bytes:
    return echo_pb2.EchoRequest(message=message, repeat=repeat).SerializeToString()


async def _outcome(coroutine: Any) -> Any:
    try:
        return await coroutine
    except grpc.aio.AioRpcError as error:
        return ("error", error.code().name)


async def _collect(iterator: Any) -> Any:
    try:
        return [reply async for reply in iterator]
    except grpc.aio.AioRpcError as error:
        return ("error", error.code().name)


async def exchange(channel: Any, metadata: Any = BEARER) -> dict[str, Any]:
    """Every RPC kind, large messages, errors: what one client stack saw."""
    say = channel.unary_unary("/echo.Echo/Say")
    expand = channel.unary_stream("/echo.Echo/Expand")
    collect = channel.stream_unary("/echo.Echo/Collect")
    chat = channel.stream_stream("/echo.Echo/Chat")
    big = "b" * 3_000_000  # over every window and frame size: split, and credited back
    words = [_request(f"w{i}") for i in range(30)]
    return {
        "unary": await _outcome(say(_request("hi"), timeout=10, metadata=metadata)),
        "large": await _outcome(say(_request(big), timeout=30, metadata=metadata)),
        "server-stream": await _collect(expand(_request("x", 200), timeout=10, metadata=metadata)),
        "client-stream": await _outcome(collect(iter(words), timeout=10, metadata=metadata)),
        "bidi": await _collect(chat(iter(words), timeout=10, metadata=metadata)),
        "empty-bidi": await _collect(chat(iter([]), timeout=10, metadata=metadata)),
        "no-credentials": await _outcome(say(_request("hi"), timeout=10)),
        "unimplemented": await _outcome(
            channel.unary_unary("/echo.Echo/Shout")(_request("hi"), timeout=10, metadata=metadata)
        ),
        "concurrent": sorted(
            await asyncio.gather(
                *(say(_request(f"c{i}"), timeout=10, metadata=metadata) for i in range(100))
            )
        ),
    }


async def both_stacks(address: str, security: ChannelSecurity = PLAINTEXT, **kw: Any):
    seen = {}
    for stack in STACKS:
        channel = open_channel(address, security, stack)
        try:
            await asyncio.wait_for(channel.channel_ready(), 10)
            seen[stack] = await exchange(channel, **kw)
        finally:
            await channel.close()
    return seen


def _schema(call: str) -> MethodSchema:
    files = descriptor_pb2.FileDescriptorSet()
    echo_pb2.DESCRIPTOR.CopyToProto(files.file.add())
    return MethodSchema(call, files.SerializeToString())


LEVEL_CALLS = [
    ("echo.Echo/Say", '{"message": "fixed"}'),  # the callback loop, frames encoded once
    ("echo.Echo/Say", '{"message": "n{{.RequestNumber}}"}'),  # the callback loop, per call
    # streams of fixed requests: the callback loops too (MethodWorkload.stream_plan)
    ("echo.Echo/Expand", '{"message": "s", "repeat": 7}'),
    ("echo.Echo/Collect", '[{"message": "a"}, {"message": "b"}, {"message": "c"}]'),
    ("echo.Echo/Chat", '[{"message": "a"}, {"message": "b"}]'),
]


@pytest.mark.parametrize("call, data", LEVEL_CALLS[2:])
def test_a_stream_of_fixed_requests_runs_on_the_callback_loops_unless_paced(
    call: str, data: str
) -> None:
    """So the differential levels above hold the callback loops' streams to grpc's; a
    paced or templated stream takes the coroutine loops (no plan)."""
    from grpcbench.rpc.workload import MethodWorkload

    plan = MethodWorkload(MethodCall.build(_schema(call), data, "{}")).unary_plan()
    assert plan is not None and plan.method_type != "unary" and plan.requests
    paced = MethodCall.build(_schema(call), data, "{}", stream_interval_s=0.01)
    templated = MethodCall.build(_schema(call), data.replace('"a"', '"{{.RequestNumber}}"'), "{}")
    if plan.method_type != "server-streaming":  # a server stream sends one request: never paced
        assert MethodWorkload(paced).unary_plan() is None
        assert MethodWorkload(templated).unary_plan() is None


async def level(address: str, stack: str, call: str, data: str, **kw: Any) -> LoadResult:
    method = MethodCall.build(_schema(call), data, json.dumps({"authorization": f"Bearer {TOKEN}"}))
    spec = make_spec(
        target=address, service="", concurrency=8, requests=400, call=method.to_json(),
        client_stack=stack, **kw,
    )  # fmt: skip
    return await run_level(spec, lambda: None, lambda done, errors: None)


def _figures(result: LoadResult) -> tuple[Any, ...]:
    stream = result.stream
    streamed = (stream.calls, stream.messages, stream.items, stream.bytes) if stream else None
    return dict(result.statuses), streamed


@pytest.fixture
def echo_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """Server children import examples/echo's service module."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(EXAMPLE), os.environ["PYTHONPATH"]]))


@pytest.mark.parametrize("kind", KINDS)
def test_both_stacks_see_the_same_on_every_server_kind(kind: str, echo_children: None) -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        server = await start_server(
            parse_server_spec(kind), "echo_service:SERVICE", {"token": TOKEN}
        )
        try:
            seen = await both_stacks(server.address)
            levels = {}
            for call, data in LEVEL_CALLS:
                for stack in STACKS:
                    levels[(call, data, stack)] = _figures(
                        await level(server.address, stack, call, data)
                    )
            for stack in STACKS:  # the open loop and a pool of connections
                result = await level(
                    server.address, stack, "echo.Echo/Say", '{"message": "o"}', rate=2000.0,
                    connections=3,
                )  # fmt: skip
                levels[("open", "", stack)] = _figures(result)
            return seen, levels
        finally:
            await server.stop()

    seen, levels = asyncio.run(main())
    assert seen["wire"] == seen["grpcio"]
    assert seen["wire"]["no-credentials"] == ("error", "UNAUTHENTICATED")
    assert seen["wire"]["unimplemented"] == ("error", "UNIMPLEMENTED")
    assert len(seen["wire"]["server-stream"]) == 200
    assert len(seen["wire"]["large"]) > 3_000_000
    for call, data in [*LEVEL_CALLS, ("open", "")]:
        reference, wire = levels[(call, data, "grpcio")], levels[(call, data, "wire")]
        assert wire == reference, (call, data)
        assert wire[0] == {"OK": 400}, (call, data)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("wire-tls"))


@pytest.fixture
def secure(certificates: Certificates) -> Iterator[str]:
    with echo_server(token=TOKEN, tls=certificates) as address:
        yield address


@pytest.mark.parametrize("how", ["cacert", "skipTLS"])
def test_both_stacks_see_the_same_over_tls(how: str, secure: str, certificates: Path) -> None:
    if how == "cacert":
        security = ChannelSecurity(cacert=str(certificates.ca), cname=SERVER_NAME)  # type: ignore[attr-defined]
    else:
        security = ChannelSecurity(skip_tls=True)
    security = security.resolve(secure)
    seen = asyncio.run(both_stacks(secure, security))
    assert seen["wire"] == seen["grpcio"]
    assert seen["wire"]["unary"] != ("error", "UNAVAILABLE")


def test_the_wrong_name_fails_tls_on_both_stacks(secure: str, certificates: Any) -> None:
    security = ChannelSecurity(cacert=str(certificates.ca), cname="not.the.name").resolve(secure)

    async def main() -> dict[str, str]:
        outcomes = {}
        for stack in STACKS:
            channel = open_channel(secure, security, stack)
            try:
                await asyncio.wait_for(channel.channel_ready(), 3)
                outcomes[stack] = "connected"
            except (ConnectionError, TimeoutError):
                outcomes[stack] = "refused"
            finally:
                await channel.close()
        return outcomes

    assert asyncio.run(main()) == {"grpcio": "refused", "wire": "refused"}


@pytest.mark.skipif(not os.environ.get("GRPCBENCH_GO_GREETER"), reason="no Go greeter built")
def test_both_stacks_on_the_go_greeter() -> None:
    from grpcbench.base.child_setup import parse_ready_line
    from grpcbench.base.processes import start_child

    async def main() -> dict[str, Any]:
        child = await start_child([os.environ["GRPCBENCH_GO_GREETER"], "-port=0"], ())
        try:
            assert child.process.stdout is not None
            port = parse_ready_line(await asyncio.wait_for(child.process.stdout.readline(), 30))
            results = {}
            for stack in STACKS:
                spec = make_spec(
                    target=f"127.0.0.1:{port}", service="hello", concurrency=20, requests=2000,
                    client_stack=stack,
                )  # fmt: skip
                results[stack] = _figures(await run_level(spec, lambda: None, lambda d, e: None))
            return results
        finally:
            await child.stop()

    results = asyncio.run(main())
    assert results["wire"] == results["grpcio"] == ({"OK": 2000}, None)


ROUTE_GUIDE = os.environ.get("GRPCBENCH_ROUTE_GUIDE", "")
ROUTE_GUIDE_PROTO = os.environ.get("GRPCBENCH_ROUTE_GUIDE_PROTO", "")
ROUTE_CALLS = [
    ("routeguide.RouteGuide/GetFeature", '{"latitude": 409146138, "longitude": -746188906}'),
    (
        "routeguide.RouteGuide/ListFeatures",
        '{"lo": {"latitude": 400000000, "longitude": -750000000},'
        ' "hi": {"latitude": 420000000, "longitude": -730000000}}',
    ),
    ("routeguide.RouteGuide/RecordRoute", '[{"latitude": 1, "longitude": 2}, {"latitude": 3}]'),
    (
        "routeguide.RouteGuide/RouteChat",
        '[{"location": {"latitude": "{{.RequestNumber}}"}, "message": "a"},'
        ' {"location": {"latitude": "{{.RequestNumber}}"}, "message": "b"}]',
    ),
]


@pytest.mark.skipif(
    not (ROUTE_GUIDE and ROUTE_GUIDE_PROTO), reason="no route_guide built (nox -s differential)"
)
@pytest.mark.parametrize("tls", [False, True], ids=["plaintext", "tls"])
def test_both_stacks_on_grpc_go_route_guide(tls: bool) -> None:
    """grpc-go's route_guide, every RPC kind; with -tls, its own example certificate
    (x509/server_cert.pem, for *.test.example.com) checked against its CA."""
    from grpcbench.base.processes import start_child
    from grpcbench.rpc.schema import compile_proto

    schema_set = compile_proto(ROUTE_GUIDE_PROTO)
    examples = Path(ROUTE_GUIDE_PROTO).parents[2]
    security = PLAINTEXT
    if tls:
        security = ChannelSecurity(
            cacert=str(examples / "data/x509/ca_cert.pem"), cname="x.test.example.com"
        )

    async def main() -> dict[tuple[str, str], Any]:
        import psutil

        argv = [ROUTE_GUIDE, "-port=0"] + (["-tls"] if tls else [])
        seen = {}
        for call, data in ROUTE_CALLS:
            for stack in STACKS:  # a fresh server per run: RouteChat keeps every note
                child = await start_child(argv, ())
                try:
                    port = 0
                    for _ in range(200):
                        listening = [
                            c for c in psutil.Process(child.pid).net_connections()
                            if c.status == "LISTEN"
                        ]  # fmt: skip
                        if listening:
                            port = listening[0].laddr.port
                            break
                        await asyncio.sleep(0.05)
                    address = f"127.0.0.1:{port}"
                    method = MethodCall.build(MethodSchema(call, schema_set), data, "{}")
                    spec = make_spec(
                        target=address, service="", concurrency=8, requests=300,
                        call=method.to_json(), client_stack=stack,
                        security=security.resolve(address).to_json() if tls else None,
                    )  # fmt: skip
                    result = await run_level(spec, lambda: None, lambda done, errors: None)
                    seen[(call, stack)] = _figures(result)
                finally:
                    await child.stop()
        return seen

    seen = asyncio.run(main())
    for call, _ in ROUTE_CALLS:
        assert seen[(call, "wire")] == seen[(call, "grpcio")], call
        assert seen[(call, "wire")][0] == {"OK": 300}, call
