"""A TCP relay on 127.0.0.1 that forwards every connection to one address and keeps
every byte it carried: ``kubectl port-forward`` as a test can have it, and a wire to
read what crossed it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress


class Relay:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.carried = bytearray()
        self.connections = 0
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closing = False

    def serve(self) -> None:
        while not self.closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.connections += 1
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                with self.lock:
                    self.carried += data
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)


@contextmanager
def tcp_relay(host: str, port: int) -> Iterator[Relay]:
    relay = Relay((host, port))
    threading.Thread(target=relay.serve, daemon=True).start()
    try:
        yield relay
    finally:
        relay.closing = True
        relay.listener.close()
