"""A Dask cluster for grpcbench on Kubernetes: the image's build context, a CA and the
certificates for Dask's TLS, and the manifests of a scheduler and one-core workers.

    python scripts/kubernetes_cluster.py image build/image --flows my_flows.py
    python scripts/kubernetes_cluster.py certificates build/tls
    python scripts/kubernetes_cluster.py manifests --image REGISTRY/grpcbench:TAG \\
        --workers 25 > cluster.yaml

The manifests are plain Deployments and a Service (no operator to install). The
cluster stays until ``kubectl delete -f cluster.yaml``, so it outlives no script and
is there for every ``grpcbench run``. Scheduler, workers and grpcbench speak TLS
(``tls://``) with the certificates of one CA, kept in the Secret ``grpcbench-dask-tls``,
so -m secrets cross no wire in plaintext. docs/scale-out.md gives the commands end
to end; tests/test_kubernetes_kit.py validates the manifests against Kubernetes'
schemas, checks the image's pins against this install, and runs a level through a
local relay standing in for ``kubectl port-forward``.

Needs the kubernetes extra (``pip install '.[kubernetes]'``) for the certificates
and the validation.
"""

from __future__ import annotations

import argparse
import datetime
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NAME = "grpcbench"
SCHEDULER = f"{NAME}-scheduler"  # the Deployment and the Service to port-forward
SECRET = f"{NAME}-dask-tls"  # ca.pem, tls.crt, tls.key
PORT = 8786
TLS_DIR = "/etc/grpcbench-tls"
TLS_FLAGS = [
    "--tls-ca-file", f"{TLS_DIR}/ca.pem", "--tls-cert", f"{TLS_DIR}/tls.crt",
    "--tls-key", f"{TLS_DIR}/tls.key",
]  # fmt: skip
# The Kubernetes version the manifests are validated against (kubernetes-validate).
KUBERNETES_VERSION = "1.30.0"


def pinned_versions() -> dict[str, str]:
    """What grpcbench compares on every worker before any load (Python aside): the
    image pins these to this machine's versions."""
    from grpcbench.load.cluster_hosts import worker_version

    versions = worker_version()
    return {
        name.removeprefix("plugin "): version
        for name, version in versions.items()
        if name not in ("grpcbench", "Python")
    }


def write_image_context(directory: Path, flows: list[Path]) -> str:
    """The Dockerfile, requirements.txt, the grpcbench wheel and the flows, in
    ``directory``; returns the Python version to build with."""
    import platform

    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "deploy" / "kubernetes" / "Dockerfile", directory / "Dockerfile")
    lines = [f"{name}=={version}" for name, version in sorted(pinned_versions().items())]
    (directory / "requirements.txt").write_text("\n".join(lines) + "\n")
    dist = directory / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        check=True,
    )  # fmt: skip
    (directory / "flows").mkdir(exist_ok=True)
    for flow in flows:
        shutil.copy(flow, directory / "flows" / flow.name)
    return platform.python_version()


def write_certificates(directory: Path, days: int = 30) -> None:
    """A CA and one certificate it signs (for the scheduler, workers and grpcbench):
    ca.pem, tls.crt and tls.key, as the Secret holds them."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    until = now + datetime.timedelta(days=days)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder().subject_name(name("grpcbench Dask CA"))
        .issuer_name(name("grpcbench Dask CA")).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(name(SCHEDULER)).issuer_name(ca.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now).not_valid_after(until)
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName(SCHEDULER), x509.DNSName("localhost"),
        ]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (directory / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    secret = directory / "tls.key"
    secret.touch(mode=0o600)
    secret.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )  # fmt: skip


def _container(name: str, image: str, command: list[str], cpu: str) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "command": command,
        "env": [{"name": "PYTHONSAFEPATH", "value": "1"}],
        "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}},
        "volumeMounts": [{"name": "tls", "mountPath": TLS_DIR, "readOnly": True}],
        "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True},
    }


def _deployment(name: str, replicas: int, container: dict[str, Any]) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [container],
                    "volumes": [{"name": "tls", "secret": {"secretName": SECRET}}],
                },
            },
        },
    }


def manifests(image: str, workers: int, cpu: str = "1") -> list[dict[str, Any]]:
    """The scheduler's Deployment and Service, and the workers' Deployment: one thread
    each (a Python process is one core's worth of client), ``cpu`` cores each."""
    scheduler_args = ["dask", "scheduler", "--protocol", "tls", "--port", str(PORT),
                      "--no-dashboard", *TLS_FLAGS]  # fmt: skip
    worker_args = ["dask", "worker", f"tls://{SCHEDULER}:{PORT}", "--nthreads", "1",
                   "--no-dashboard", "--local-directory", "/tmp", *TLS_FLAGS]  # fmt: skip
    scheduler = _deployment(SCHEDULER, 1, _container("scheduler", image, scheduler_args, "1"))
    scheduler["spec"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "dask", "containerPort": PORT}
    ]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SCHEDULER, "labels": {"app.kubernetes.io/name": NAME}},
        "spec": {
            "selector": dict(scheduler["spec"]["selector"]["matchLabels"]),
            "ports": [{"name": "dask", "port": PORT, "targetPort": "dask"}],
        },
    }
    worker = _deployment(f"{NAME}-workers", workers, _container("worker", image, worker_args, cpu))
    return [scheduler, service, worker]


def validate(documents: list[dict[str, Any]], version: str = KUBERNETES_VERSION) -> None:
    """Each manifest against Kubernetes' own schemas (kubernetes-validate), strict:
    an unknown field is an error."""
    import kubernetes_validate

    for document in documents:
        kubernetes_validate.validate(document, version, strict=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    image = commands.add_parser("image", help="write the image's build context")
    image.add_argument("directory", type=Path)
    image.add_argument("--flows", type=Path, nargs="*", default=[])
    certificates = commands.add_parser("certificates", help="a CA and a certificate")
    certificates.add_argument("directory", type=Path)
    rendered = commands.add_parser("manifests", help="the cluster's manifests, validated")
    rendered.add_argument("--image", required=True)
    rendered.add_argument("--workers", type=int, default=4)
    rendered.add_argument("--cpu", default="1")
    args = parser.parse_args()
    if args.command == "image":
        python = write_image_context(args.directory, args.flows)
        print(f"docker build --build-arg PYTHON={python} -t IMAGE {args.directory}")
    elif args.command == "certificates":
        write_certificates(args.directory)
        print(
            f"kubectl create secret generic {SECRET} --from-file={args.directory}/ca.pem"
            f" --from-file={args.directory}/tls.crt --from-file={args.directory}/tls.key"
        )
    else:
        import yaml

        documents = manifests(args.image, args.workers, args.cpu)
        validate(documents)
        print(yaml.safe_dump_all(documents, sort_keys=False), end="")


if __name__ == "__main__":
    main()
