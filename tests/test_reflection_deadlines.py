"""Reflection against servers that never answer: every wait has a deadline, named in
one line (``list``, ``describe`` and a run's --call by reflection all use it).
Without one, a server that took the reflection call and never answered hung them."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from grpcbench.base.errors import UsageError
from grpcbench.rpc import schema
from grpcbench.rpc.security import PLAINTEXT


class _Reflection(reflection_pb2_grpc.ServerReflectionServicer):
    """Answers ``list_services`` (or nothing, with ``answers_list=False``), never a lookup."""

    def __init__(self, answers_list: bool, release: threading.Event) -> None:
        self.answers_list = answers_list
        self.release = release

    def ServerReflectionInfo(self, requests, context):  # type: ignore[no-untyped-def]
        for request in requests:
            if not self.answers_list or request.WhichOneof("message_request") != "list_services":
                self.release.wait(30)
                return
            listed = reflection_pb2.ListServiceResponse(
                service=[reflection_pb2.ServiceResponse(name="helloworld.Greeter")]
            )
            yield reflection_pb2.ServerReflectionResponse(list_services_response=listed)


@contextmanager
def _silent_reflection(answers_list: bool) -> Iterator[str]:
    release = threading.Event()
    server = grpc.server(futures.ThreadPoolExecutor(4))
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
        _Reflection(answers_list, release), server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        release.set()
        server.stop(None)


@pytest.mark.parametrize("answers_list", [False, True])
def test_a_reflection_service_that_never_answers_ends_in_one_line(
    answers_list: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schema, "REFLECTION_TIMEOUT_S", 0.5)
    with _silent_reflection(answers_list) as address:
        started = time.monotonic()
        with pytest.raises(UsageError) as error:
            schema.reflect(address, PLAINTEXT, "helloworld.Greeter")
    assert time.monotonic() - started < 5
    assert str(error.value) == (
        f"the target {address} did not answer its reflection request within 0.5 s"
    )


def test_a_target_that_accepts_and_says_nothing_names_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(schema, "REFLECTION_TIMEOUT_S", 0.5)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(UsageError, match=r"no HTTP/2 answer within 0\.5 s"):
            schema.reflect(address, PLAINTEXT, "helloworld.Greeter")
