"""What --cluster may be given: the drivers it runs as, and what it may carry.

Each cluster worker receives the call (metadata values and the client key included)
through the scheduler, so where that is plaintext on the network the run is refused
unless the user allows it; and an encrypted scheduler without Dask's TLS settings is
refused here, naming them, instead of failing after Dask's long connect timeout.
"""

from __future__ import annotations

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import ENCRYPTED_CLUSTER_SCHEMES
from grpcbench.load.catalogue import on_cluster


def cluster_drivers(
    drivers: tuple[str, ...], cluster: str | None, cluster_workers: int | None
) -> tuple[str, ...]:
    """With --cluster the built-in engine runs on the cluster's workers (driver dask)."""
    if cluster_workers is not None and (not cluster or cluster_workers <= 0):
        raise UsageError("--cluster-workers N needs --cluster and a positive N")
    if not cluster:
        return drivers
    return on_cluster(drivers)


def check_secrets_stay_encrypted(cluster: str, secrets: list[str], allowed: bool) -> None:
    """Only tls:// and wss:// carry secrets to the workers, unless the user allows it.
    ``secrets``: what the run would send, in words ("the metadata (-m/-M)", ...)."""
    scheme = cluster.partition("://")[0] if "://" in cluster else ""
    if scheme in ENCRYPTED_CLUSTER_SCHEMES:
        _check_dask_tls(cluster)
    if not scheme or scheme in ENCRYPTED_CLUSTER_SCHEMES or allowed:
        return
    if secrets:
        raise UsageError(
            f"--cluster {cluster} would send {' and '.join(secrets)} to its workers in"
            " plaintext: use a tls:// or wss:// scheduler (Dask's security settings), or"
            " --allow-plaintext-secrets on a network you trust"
        )


def _check_dask_tls(cluster: str) -> None:
    """A tls:// or wss:// scheduler needs the client's certificate, key and CA from
    Dask's configuration; without them Dask fails after a long connect timeout."""
    try:
        import dask.config
    except ImportError:
        return  # the cluster extra's own one-line message comes from the driver
    # dask.config.get, not the raw dict: set through the environment, "ca-file" is
    # stored as "ca_file", and only get() takes both spellings.
    missing = [
        env for env, key in (
            ("DASK_DISTRIBUTED__COMM__TLS__CA_FILE", "ca-file"),
            ("DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT", "client.cert"),
            ("DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY", "client.key"),
        ) if not dask.config.get(f"distributed.comm.tls.{key}", default=None)
    ]  # fmt: skip
    if missing:
        raise UsageError(
            f"--cluster {cluster} needs Dask's TLS settings for this client: set"
            f" {', '.join(missing)} (or distributed.comm.tls.* in Dask's configuration)"
        )
