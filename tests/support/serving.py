"""A sync grpcio server in the test process, on 127.0.0.1, for servers of the tests' own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import grpc


@contextmanager
def served(register: Callable[[grpc.Server], None]) -> Iterator[str]:
    """Serve what ``register`` adds, on threads; yields the address."""
    server = grpc.server(ThreadPoolExecutor(max_workers=16))
    register(server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(0).wait()
