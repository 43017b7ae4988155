"""How the client reaches a target: plaintext (the default) or TLS, with ghz's options.

``--cacert``, ``--cert``, ``--key``, ``--cname`` and ``--skipTLS`` mean what
they mean to ghz, and any of them switches to TLS. gRPC Python cannot switch
off certificate checks, so ``--skipTLS`` fetches the server's own certificate
once and trusts it (BoringSSL accepts a trusted leaf), with the name it
carries: the same effect as ghz's, for the benchmark's purposes.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grpcbench.base import defaults, panels
from grpcbench.base.declarations import option as declared_option
from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_host_port
from grpcbench.rpc.client_options import DEFAULT, ClientOptions

if TYPE_CHECKING:  # grpc is imported where channels are made: scenario files read this
    import ssl

    import grpc

# Its own subchannel pool per channel: grpcio would otherwise share one TCP
# connection between channels with the same target and arguments. Replies are
# capped at grpc's default size (a reflection answer too: a server that streams
# one endless message must not grow `list` without bound); the load's channels
# take --max-recv-message-size instead (ClientOptions).
CHANNEL_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("grpc.use_local_subchannel_pool", 1),
    ("grpc.max_receive_message_length", defaults.MAX_RECV_BYTES),
)
PROBE_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class ChannelSecurity:
    """TLS settings as given (paths), plus what ``resolve`` read from them."""

    cacert: str | None = declared_option(
        None,
        help=("Trusted root certificates (PEM) to check the target's."),
        panel=panels.TLS,
        reads=True,
    )
    cert: str | None = declared_option(
        None,
        help=("Client certificate (PEM), with --key."),
        panel=panels.TLS,
        reads=True,
    )
    key: str | None = declared_option(
        None,
        help=("The client certificate's private key (PEM)."),
        panel=panels.TLS,
        secret=True,
        reads=True,
    )
    cname: str | None = declared_option(
        None, help=("Server name to expect in its certificate."), panel=panels.TLS
    )
    skip_tls: bool = declared_option(
        False,
        "--skipTLS",
        help=("TLS without checking the server's certificate."),
        panel=panels.TLS,
    )
    # A ghz command line without --insecure: TLS checked against the system's trusted
    # CAs, ghz's default (run.ghz_compat sets it, only when no TLS option is given;
    # no option of its own).
    system_roots: bool = False
    # Filled by ``resolve``: PEM texts, so generator processes need not read files.
    root_pem: str | None = None
    cert_pem: str | None = None
    key_pem: str | None = None

    @property
    def tls(self) -> bool:
        return bool(
            self.cacert or self.cert or self.key or self.cname or self.skip_tls
            or self.system_roots
        )  # fmt: skip

    def describe(self) -> str:
        if not self.tls:
            return "plaintext"
        parts = ["TLS"]
        if self.system_roots:
            parts.append("the system's trusted CAs (ghz's default; --insecure: plaintext)")
        if self.skip_tls:
            parts.append("server certificate not checked (--skipTLS)")
        if self.cname:
            parts.append(f"name {self.cname}")
        if self.cert:
            parts.append("client certificate")
        return ", ".join(parts)

    def check(self) -> None:
        """Every file readable and the combination sensible, before anything starts."""
        if bool(self.cert) != bool(self.key):
            raise UsageError("--cert and --key go together (the client certificate and its key)")
        if self.skip_tls and self.cacert:
            raise UsageError("give either --cacert (check the server) or --skipTLS (do not)")
        for option, path in (("--cacert", self.cacert), ("--cert", self.cert), ("--key", self.key)):
            if path and not _is_file(path):
                raise UsageError(f"{option} {path[:120]}: no such file")

    def resolve(self, address: str) -> ChannelSecurity:
        """With the PEM texts read (and, for --skipTLS, the server's certificate fetched)."""
        if not self.tls:
            return self
        self.check()
        root = _read(self.cacert, "--cacert")
        if self.system_roots:  # the only TLS setting (no --cacert, no --skipTLS)
            root = system_roots_pem()
        cname = self.cname
        if self.skip_tls:
            root, presented = server_certificate(address)
            cname = cname or presented
        return ChannelSecurity(
            cacert=self.cacert, cert=self.cert, key=self.key, cname=cname,
            skip_tls=self.skip_tls, system_roots=self.system_roots, root_pem=root,
            cert_pem=_read(self.cert, "--cert"), key_pem=_read(self.key, "--key"),
        )  # fmt: skip

    def channel_options(self) -> list[tuple[str, Any]]:
        options = list(CHANNEL_OPTIONS)
        if self.tls and self.cname:
            options.append(("grpc.ssl_target_name_override", self.cname))
        return options

    def credentials(self) -> grpc.ChannelCredentials:
        import grpc

        def encoded(text: str | None) -> bytes | None:
            return text.encode() if text else None

        return grpc.ssl_channel_credentials(
            encoded(self.root_pem), encoded(self.key_pem), encoded(self.cert_pem)
        )

    def aio_channel(self, address: str, client: ClientOptions = DEFAULT) -> grpc.aio.Channel:
        """A grpc.aio channel with these TLS settings and ``client``'s options."""
        import grpc

        extra = client.grpc_options()
        given = {key for key, _ in extra}
        options = [item for item in self.channel_options() if item[0] not in given] + extra
        compression = grpc.Compression.Gzip if client.gzip else None
        if not self.tls:
            return grpc.aio.insecure_channel(address, options, compression)
        return grpc.aio.secure_channel(address, self.credentials(), options, compression)

    def sync_channel(self, address: str) -> grpc.Channel:
        import grpc

        if not self.tls:
            return grpc.insecure_channel(address, options=self.channel_options())
        return grpc.secure_channel(address, self.credentials(), self.channel_options())

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> ChannelSecurity:
        """From a ``GeneratorJob``'s ``security``; None (the spec's default) is plaintext."""
        return cls(**data) if data else PLAINTEXT


PLAINTEXT = ChannelSecurity()


def _is_file(path: str) -> bool:
    try:
        return Path(path).is_file()
    except (OSError, ValueError):  # a name too long; a NUL in it
        return False


def _read(path: str | None, option: str) -> str | None:
    if not path:
        return None
    from grpcbench.base.input_files import read_input_text

    return read_input_text(path, option)


def _tls_context(root_pem: str | None = None) -> ssl.SSLContext:
    """A client context for probes: no hostname check; the certificate checked
    against ``root_pem`` when given (a leaf may be the trust anchor), else not at all."""
    import ssl  # here: a probe needs it, `grpcbench --help` does not

    context = (
        ssl.create_default_context(cadata=root_pem) if root_pem else ssl.create_default_context()
    )
    context.check_hostname = False
    if root_pem:
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    else:
        context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    return context


def _handshake(address: str, context: ssl.SSLContext) -> ssl.SSLSocket:
    host, port = parse_host_port(address)
    raw = socket.create_connection((host, port), PROBE_TIMEOUT_S)
    try:
        return context.wrap_socket(raw, server_hostname=host)
    except BaseException:
        raw.close()
        raise


def server_certificate(address: str) -> tuple[str, str | None]:
    """The certificate the server presents (PEM) and the first name in it (for --skipTLS).

    Python decodes a certificate only once it verified it, so the second handshake
    trusts the certificate the first one fetched."""
    import ssl

    try:
        with _handshake(address, _tls_context()) as tls:
            der = tls.getpeercert(binary_form=True)
        if der is None:
            raise UsageError(f"--skipTLS: {address} presented no certificate")
        pem = ssl.DER_cert_to_PEM_cert(der)
        with _handshake(address, _tls_context(pem)) as tls:
            decoded = tls.getpeercert() or {}
    except (OSError, ssl.SSLError) as error:
        raise UsageError(
            f"--skipTLS: no TLS handshake with {address} ({error}); if it speaks plaintext,"
            " drop the TLS options"
        ) from None
    return pem, _certificate_name(decoded)


def _certificate_name(decoded: dict[str, Any]) -> str | None:
    """The first DNS name (else the common name) of a decoded certificate."""
    for kind, value in decoded.get("subjectAltName", ()):
        if kind == "DNS":
            return str(value)
    for entry in decoded.get("subject", ()):
        for key, value in entry:
            if key == "commonName":
                return str(value)
    return None


def speaks_tls(address: str) -> bool | None:
    """Whether the target completes a TLS handshake (certificate not checked);
    None when it cannot be told (nothing listening)."""
    import ssl

    try:
        with _handshake(address, _tls_context()):
            return True
    except ssl.SSLError:
        return False
    except ConnectionRefusedError:
        return None
    except ConnectionError:  # reset or closed during the handshake: a plaintext server
        return False
    except OSError:
        return None


TLS_OPTIONS = "--cacert, --cert, --key, --cname, --skipTLS"
# Where Go's crypto/x509 looks for the system's CA bundle on Linux (after
# SSL_CERT_FILE), so a ghz line trusts what ghz trusts.
SYSTEM_CA_FILES = (
    "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem", "/etc/pki/tls/cacert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem",
)  # fmt: skip


def system_roots_pem() -> str | None:
    """The system's trusted CAs as ghz (Go) finds them: $SSL_CERT_FILE, else the first
    bundle of ``SYSTEM_CA_FILES``; None (grpc's own roots) when there is none."""
    candidates = [os.environ.get("SSL_CERT_FILE", ""), *SYSTEM_CA_FILES]
    from grpcbench.base.input_files import read_input_text

    for path in filter(None, candidates):
        try:
            return read_input_text(path, "$SSL_CERT_FILE")  # a file, never a device
        except UsageError:
            continue
    return None


async def tls_failure(address: str, security: ChannelSecurity, details: str = "") -> str | None:
    """Why a connection failed when TLS is the cause: a plaintext/TLS mismatch, or
    a handshake that failed (the certificate or its name); None otherwise."""
    import asyncio  # here: security is parsed with the options, long before any loop

    tls = await asyncio.to_thread(speaks_tls, address)
    if tls is None:
        return None
    if tls and not security.tls:
        return f"the target {address} speaks TLS: give --cacert CA (or --skipTLS)"
    if not tls and security.system_roots:
        return (
            f"the target {address} speaks plaintext: give --insecure (a ghz command line"
            " speaks TLS unless told, as ghz does)"
        )
    if not tls and security.tls:
        return f"the target {address} speaks plaintext: drop the TLS options ({TLS_OPTIONS})"
    if tls and security.tls:
        because = f" ({details})" if details else ""
        return (
            f"the TLS handshake with {address} failed{because}: check --cacert and --cname"
            " (the name in its certificate), or give --skipTLS"
        )
    return None
