"""S3 for the object scenarios: moto's server embedded, or a real S3/MinIO.

``s3_endpoint`` unset: grpcbench starts moto on 127.0.0.1 and seeds a bucket
with ``objects`` objects (893, the seed's count). Set: that endpoint is used
as it is (with ``s3_bucket`` and the usual AWS credentials), after a check
that it answers and the bucket exists.
"""

from __future__ import annotations

import socket
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlsplit

from grpcbench.base.errors import UsageError
from grpcbench.base.preparation import checkpoint, current
from grpcbench.base.processes import python_argv, ready_process

EMBEDDED_CREDENTIALS = {"aws_access_key_id": "grpcbench", "aws_secret_access_key": "grpcbench"}
REGION = "us-east-1"
DEFAULT_BUCKET = "grpcbench"
DEFAULT_OBJECTS = 893


def s3_client(params: dict[str, Any], timeout_s: float = 5.0) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=timeout_s, read_timeout=timeout_s, retries={"max_attempts": 1})
    credentials = EMBEDDED_CREDENTIALS if params.get("s3_embedded") else {}
    return boto3.client(
        "s3", endpoint_url=params["s3_endpoint"], region_name=REGION, config=config, **credentials
    )


def seed_bucket(params: dict[str, Any]) -> None:
    client = s3_client(params)
    bucket = params["s3_bucket"]
    client.create_bucket(Bucket=bucket)
    prefix = params.get("s3_prefix", "")
    for index in range(int(params.get("objects", DEFAULT_OBJECTS))):
        checkpoint()  # an interrupt stops the seeding here
        body = f"object {index}\n".encode() * (1 + index % 7)
        client.put_object(Bucket=bucket, Key=f"{prefix}object-{index:05d}.txt", Body=body)


def check_reachable(endpoint: str, timeout_s: float = 3.0) -> None:
    """A TCP connection first, so "unreachable" and "no credentials" are told apart."""
    url = urlsplit(endpoint)
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError as error:
        raise UsageError(f"bad --s3-endpoint {endpoint!r}: {error}") from None
    if not url.hostname:
        raise UsageError(f"bad --s3-endpoint {endpoint!r}: no host")
    try:
        socket.create_connection((url.hostname, port), timeout=timeout_s).close()
    except OSError as error:
        raise UsageError(f"cannot reach S3 at {endpoint}: {error.strerror or error}") from None


def check_bucket(params: dict[str, Any]) -> None:
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    check_reachable(params["s3_endpoint"])
    try:
        s3_client(params).head_bucket(Bucket=params["s3_bucket"])
    except NoCredentialsError:
        raise UsageError(
            f"no S3 credentials for {params['s3_endpoint']}: set AWS_ACCESS_KEY_ID and"
            " AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
        ) from None
    except ValueError as error:  # botocore's "Invalid endpoint"
        raise UsageError(f"bad --s3-endpoint {params['s3_endpoint']!r}: {error}") from None
    except ClientError as error:
        raise UsageError(
            f"S3 bucket {params['s3_bucket']!r} at {params['s3_endpoint']} is not usable:"
            f" {error.response.get('Error', {}).get('Code', error)}"
        ) from None
    except BotoCoreError as error:
        raise UsageError(f"cannot reach S3 at {params['s3_endpoint']}: {error}") from None


def provide_s3(params: dict[str, Any], stack: ExitStack) -> dict[str, Any]:
    """Server params with a usable ``s3_endpoint``/``s3_bucket`` (starting moto if needed)."""
    params = {**params, "s3_bucket": params.get("s3_bucket") or DEFAULT_BUCKET}
    if not params.get("s3_endpoint"):
        try:
            import moto  # noqa: F401
        except ImportError:
            raise UsageError(
                "the embedded S3 needs moto: pip install 'grpcbench[io]' (or give --s3-endpoint)"
            ) from None
        argv = python_argv("grpcbench.backing.s3_child")
        port = stack.enter_context(ready_process("S3 (moto)", argv, current(), role="S3"))
        params.update(s3_endpoint=f"http://127.0.0.1:{port}", s3_embedded=True)
        seed_bucket(params)
    check_bucket(params)
    return params
