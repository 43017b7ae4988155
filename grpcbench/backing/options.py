"""The backing services' options: another S3, MongoDB or database than the embedded
ones, and a simulated upstream delay. Each is a server param of the scenarios that
read it, given through an option of its own (``named_server_params``), and checked
by the service that reads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grpcbench.base import panels
from grpcbench.base.declarations import option


@dataclass(frozen=True)
class BackingArgs:
    s3_endpoint: str | None = option(
        None,
        help=("Use this S3 (or MinIO) instead of the embedded moto server."),
        panel=panels.BACKING_SERVICES,
        secret=True,
    )
    s3_bucket: str | None = option(
        None, help=("Bucket for --s3-endpoint."), panel=panels.BACKING_SERVICES
    )
    mongo_uri: str | None = option(
        None,
        help=("Use this MongoDB instead of the embedded mongo-java-server."),
        panel=panels.BACKING_SERVICES,
        secret=True,
    )
    mongo_driver: str | None = option(
        None,
        help=("Async servers' MongoDB driver: pymongo (AsyncMongoClient) or motor."),
        panel=panels.BACKING_SERVICES,
    )
    io_delay_ms: float | None = option(
        None,
        help=("Simulated upstream round trip before each S3 call, in ms."),
        panel=panels.BACKING_SERVICES,
    )
    database: str | None = option(
        None,
        help=(
            "paginate-vs-stream's database: postgresql (embedded, the default with the "
            "database extra), sqlite, or your own postgresql://USER@HOST:PORT/DB or "
            "mysql://USER@HOST:PORT/DB (passwords from PGPASSWORD or the URL, never "
            "shown)."
        ),
        panel=panels.BACKING_SERVICES,
        secret=True,
    )

    def named_server_params(self) -> dict[str, Any]:
        """The params given, by name (None: not given)."""
        named = {
            "s3_endpoint": self.s3_endpoint,
            "s3_bucket": self.s3_bucket,
            "mongo_uri": self.mongo_uri,
            "mongo_driver": self.mongo_driver,
            "io_delay_ms": self.io_delay_ms,
            "database": self.database,
        }
        return {key: value for key, value in named.items() if value is not None}
