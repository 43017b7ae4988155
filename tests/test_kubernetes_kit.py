"""The Kubernetes kit (scripts/kubernetes_cluster.py, deploy/kubernetes/Dockerfile), as far
as it runs without a cluster: the manifests validate against Kubernetes' own schemas
and hold what docs/scale-out.md relies on; the image pins what this machine runs, so
its workers pass grpcbench's version check; and a level runs through a relay standing
in for `kubectl port-forward`, over TLS, with no secret readable on that wire."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from pathlib import Path

import pytest

import grpcbench
from grpcbench.load.cluster_hosts import check_versions, worker_version
from tests.conftest import REPO, run_grpcbench
from tests.support.echo_server import Certificates
from tests.support.logging_echo import logging_echo
from tests.support.tcp_relay import tcp_relay

sys.path.insert(0, str(REPO / "scripts"))
import kubernetes_cluster as kit  # noqa: E402

pytest.importorskip("kubernetes_validate")
PROTO = str(REPO / "examples" / "echo" / "echo.proto")
DOCS = (REPO / "docs" / "scale-out.md").read_text()


def test_the_manifests_validate_and_hold_what_the_docs_rely_on() -> None:
    documents = kit.manifests("registry/grpcbench:0.1.0", workers=25)
    kit.validate(documents)  # strict: an unknown field fails
    kinds = {(d["kind"], d["metadata"]["name"]) for d in documents}
    assert kinds == {("Deployment", kit.SCHEDULER), ("Service", kit.SCHEDULER),
                     ("Deployment", "grpcbench-workers")}  # fmt: skip
    scheduler, service, workers = documents
    (worker,) = workers["spec"]["template"]["spec"]["containers"]
    assert workers["spec"]["replicas"] == 25
    command = worker["command"]
    assert command[:3] == ["dask", "worker", f"tls://{kit.SCHEDULER}:{kit.PORT}"]
    assert command[command.index("--nthreads") + 1] == "1"
    assert worker["resources"]["limits"]["cpu"] == "1"
    for document in (scheduler, workers):
        (container,) = document["spec"]["template"]["spec"]["containers"]
        assert set(kit.TLS_FLAGS) <= set(container["command"])
        assert {"name": "PYTHONSAFEPATH", "value": "1"} in container["env"]
    assert scheduler["spec"]["template"]["metadata"]["labels"] == service["spec"]["selector"]
    # The docs port-forward the Service these manifests name, and create their Secret.
    assert f"kubectl port-forward service/{kit.SCHEDULER} {kit.PORT}:{kit.PORT}" in DOCS
    assert f"kubectl create secret generic {kit.SECRET}" in DOCS


def test_a_manifest_with_an_unknown_field_is_refused() -> None:
    import kubernetes_validate

    documents = kit.manifests("registry/grpcbench:0.1.0", workers=1)
    documents[2]["spec"]["template"]["spec"]["containers"][0]["cpus"] = "1"
    with pytest.raises(kubernetes_validate.ValidationError):
        kit.validate(documents)


@pytest.mark.integration
def test_the_image_pins_what_this_machine_runs(tmp_path: Path) -> None:
    flow = tmp_path / "my_flows.py"
    flow.write_text("async def flow(client):\n    pass\n")
    python = kit.write_image_context(tmp_path / "image", [flow])
    image = tmp_path / "image"
    assert python == platform.python_version()
    assert "ARG PYTHON" in (image / "Dockerfile").read_text()
    pins = dict(line.split("==") for line in (image / "requirements.txt").read_text().split())
    (wheel,) = (image / "dist").glob("*.whl")
    assert re.match(rf"grpcbench-{re.escape(grpcbench.__version__)}-", wheel.name)
    assert (image / "flows" / "my_flows.py").exists()
    # A worker built from it reports what grpcbench's check expects of it.
    mine = worker_version()
    built = {"grpcbench": grpcbench.__version__, "Python": python}
    built |= {(f"plugin {n}" if f"plugin {n}" in mine else n): v for n, v in pins.items()}
    assert set(built) == set(mine)
    check_versions({"tls://worker:1": built}, mine)


@pytest.mark.integration
def test_a_level_through_a_port_forward_relay_over_tls(tmp_path: Path) -> None:
    from tests.test_cluster_tls import tls_cluster

    kit.write_certificates(tmp_path / "tls")
    tls = tmp_path / "tls"
    files = Certificates(tls / "ca.pem", tls / "tls.crt", tls / "tls.key")
    client_tls = {
        "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(files.ca),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(files.cert),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(files.key),
    }
    out = tmp_path / "r.json"
    with tls_cluster(tmp_path, files, workers=1) as scheduler, logging_echo() as (address, log):
        host, port = scheduler.removeprefix("tls://").rsplit(":", 1)
        with tcp_relay(host, int(port)) as relay:
            done = run_grpcbench(
                "run", "--cluster", f"tls://127.0.0.1:{relay.port}", "--target", address,
                "--insecure", "--proto", PROTO, "--call", "echo.Echo/Say",
                "-d", '{"message": "m"}', "-m", "authorization=Bearer S3CRET", "-c", "2",
                "-n", "50", "--warmup", "0", "--output", str(out),
                env={**os.environ, **client_tls}, timeout=300,
            )  # fmt: skip
        seen = [m.get("authorization") for m in log.metadata]
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    assert level["load"]["driver"] == "dask" and level["load"]["statuses"] == {"OK": 50}
    assert seen == ["Bearer S3CRET"] * 51
    assert relay.connections >= 1 and len(relay.carried) > 1000
    assert b"S3CRET" not in relay.carried and b"echo.Echo" not in relay.carried
