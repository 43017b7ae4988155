"""TLS between grpcbench and its Dask scheduler: a real `dask scheduler` and `dask
worker`s that speak only tls://, configured as docs/scale-out.md says (Dask's own
DASK_DISTRIBUTED__COMM__TLS__* settings), carry a level whose metadata holds a secret,
with no --allow-plaintext-secrets; the server sees every call and the secret."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO, run_grpcbench
from tests.support.echo_server import Certificates, make_certificates
from tests.support.logging_echo import logging_echo

pytest.importorskip("distributed")
PROTO = str(REPO / "examples" / "echo" / "echo.proto")


def _tls_flags(certificates: Certificates) -> list[str]:
    return [
        "--tls-ca-file", str(certificates.ca), "--tls-cert", str(certificates.cert),
        "--tls-key", str(certificates.key),
    ]  # fmt: skip


@contextmanager
def tls_cluster(workdir: Path, certificates: Certificates, workers: int) -> Iterator[str]:
    """A scheduler on tls://127.0.0.1 and ``workers`` one-thread workers; its address."""
    dask = shutil.which("dask") or str(Path(sys.executable).parent / "dask")
    scheduler_file = workdir / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes = [
        subprocess.Popen(
            [dask, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", "0",
             "--no-dashboard", "--scheduler-file", str(scheduler_file),
             *_tls_flags(certificates)],
            **quiet,  # type: ignore[call-overload]
        )
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tls://127.0.0.1:"), address
        processes.append(
            subprocess.Popen(
                [dask, "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                 "--nworkers", str(workers), "--no-dashboard", "--local-directory",
                 str(workdir), *_tls_flags(certificates)],
                **quiet,  # type: ignore[call-overload]
            )
        )  # fmt: skip
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in reversed(processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.mark.integration
def test_a_level_with_a_secret_runs_over_a_tls_scheduler(tmp_path: Path) -> None:
    certificates = make_certificates(tmp_path, loopback=True)
    client_tls = {
        "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(certificates.ca),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(certificates.cert),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(certificates.key),
    }
    out = tmp_path / "r.json"
    with tls_cluster(tmp_path, certificates, workers=2) as scheduler, logging_echo() as (
        address, log,
    ):  # fmt: skip
        done = run_grpcbench(
            "run", "--cluster", scheduler, "--cluster-workers", "2", "--target", address,
            "--insecure", "--proto", PROTO, "--call", "echo.Echo/Say", "-d", '{"message": "m"}',
            "-m", "authorization=Bearer S3CRET", "-c", "2", "-n", "100", "--warmup", "0",
            "--output", str(out),
            env={**os.environ, **client_tls}, timeout=300,
        )  # fmt: skip
        seen = [m.get("authorization") for m in log.metadata]
        # Without the client's certificate, the same line is refused at once, naming them.
        refused = run_grpcbench(
            "run", "--cluster", scheduler, "--target", address, "--insecure", "--proto", PROTO,
            "--call", "echo.Echo/Say", "-m", "authorization=Bearer S3CRET", "--dry-run",
            env={k: v for k, v in os.environ.items() if not k.startswith("DASK_")},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    assert level["load"]["driver"] == "dask" and len(level["load"]["workers"]) == 2
    assert level["load"]["statuses"] == {"OK": 100}
    assert seen == ["Bearer S3CRET"] * 101  # and the pre-flight call
    assert "S3CRET" not in done.stdout + done.stderr + out.read_text()
    assert refused.returncode == 2 and "DASK_DISTRIBUTED__COMM__TLS__CA_FILE" in refused.stderr
