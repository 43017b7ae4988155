"""A server of the tests' own (examples/echo, not a bundled service), plaintext or TLS.

It runs in the test process (a sync grpcio server on its own threads), with
reflection, and checks the metadata server-side when given a token, so the
command line under test treats it exactly as somebody else's server.
"""

from __future__ import annotations

import datetime
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_reflection.v1alpha import reflection

from tests.conftest import REPO

EXAMPLE = REPO / "examples/echo"
if str(EXAMPLE) not in sys.path:
    sys.path.append(str(EXAMPLE))

import echo_pb2  # noqa: E402
import echo_pb2_grpc  # noqa: E402
import echo_service  # noqa: E402

SERVER_NAME = "echo.bench.test"  # in the test certificate; not the address dialled


@dataclass(frozen=True)
class Certificates:
    ca: Path
    cert: Path
    key: Path


def make_certificates(directory: Path, loopback: bool = False) -> Certificates:
    """A CA and a server certificate for SERVER_NAME it signed (cryptography);
    ``loopback``: valid for 127.0.0.1 too, so a client that dials the address and sends
    no name (ghz without --cname) can check it."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "grpcbench test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(1).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, SERVER_NAME)]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName(SERVER_NAME),
            *([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))] if loopback else []),
        ]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    paths = Certificates(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    paths.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


class _TokenEverywhere(grpc.ServerInterceptor):
    """Refuses every call without the token, the reflection service's included."""

    def __init__(self, token: str) -> None:
        self.expected = ("authorization", f"Bearer {token}")

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        if self.expected in tuple(details.invocation_metadata or ()):
            return continuation(details)

        def refuse(request: Any, context: grpc.ServicerContext) -> Any:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "no token")

        return grpc.stream_stream_rpc_method_handler(refuse)


class _Recording(grpc.ServerInterceptor):
    """Appends each echo call's metadata to ``seen``: what the server saw."""

    def __init__(self, seen: list[dict[str, str]]) -> None:
        self.seen = seen

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        if details.method.startswith("/echo."):
            self.seen.append(dict(details.invocation_metadata or ()))
        return continuation(details)


@contextmanager
def echo_server(
    token: str | None = None, tls: Certificates | None = None, guard_reflection: bool = False,
    seen: list[dict[str, str]] | None = None,
) -> Iterator[str]:  # fmt: skip
    """Serve echo.Echo (with reflection) on 127.0.0.1; yields its address. With ``token``,
    echo's methods demand it; with ``guard_reflection`` too, every call does. ``seen``
    gets each echo call's metadata."""
    interceptors: list[grpc.ServerInterceptor] = [_Recording(seen)] if seen is not None else []
    if token and guard_reflection:
        interceptors.append(_TokenEverywhere(token))
    server = grpc.server(ThreadPoolExecutor(max_workers=8), interceptors=interceptors)
    params = {"token": token} if token else {}
    echo_pb2_grpc.add_EchoServicer_to_server(echo_service.GrpcioEcho(params), server)
    names = (echo_pb2.DESCRIPTOR.services_by_name["Echo"].full_name, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    if tls:
        credentials = grpc.ssl_server_credentials([(tls.key.read_bytes(), tls.cert.read_bytes())])
        port = server.add_secure_port("127.0.0.1:0", credentials)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(0).wait()
