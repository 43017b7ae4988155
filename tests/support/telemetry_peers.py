"""The peers of the telemetry tests: the scrape URL a ``run --prometheus 0`` prints, and
an OTLP/HTTP receiver on opentelemetry-proto that keeps every export and its headers."""

from __future__ import annotations

import re
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def metrics_url(process: subprocess.Popen[str]) -> str:
    """Read ``process``'s stderr up to the line that names its metrics URL."""
    assert process.stderr is not None
    while True:
        line = process.stderr.readline()
        assert line, "the run ended before serving metrics"
        found = re.search(r"http://127\.0\.0\.1:\d+/metrics", line)
        if found:
            return found.group(0)


@dataclass
class Received:
    url: str
    exports: list[Any] = field(default_factory=list)  # ExportMetricsServiceRequest
    authorizations: list[str] = field(default_factory=list)  # each export's header


@contextmanager
def otlp_receiver() -> Iterator[Received]:
    """A receiver on this machine's loopback, for as long as the block runs."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    received = Received("")

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.exports.append(ExportMetricsServiceRequest.FromString(body))
            received.authorizations.append(self.headers.get("authorization", ""))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    received.url = f"http://127.0.0.1:{server.server_port}/v1/metrics"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield received
    finally:
        server.shutdown()
