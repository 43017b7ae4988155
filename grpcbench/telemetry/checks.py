"""Live telemetry's options, checked before anything starts: the address Prometheus
scrapes, the OTLP endpoint and its headers, and the extra each needs."""

from __future__ import annotations


def check_live_telemetry(
    prometheus: str | None, otlp: str | None, otlp_header_items: tuple[str, ...]
) -> bool:
    """Whether the run sends live figures (then its levels report interval by interval)."""
    if prometheus is not None:
        from grpcbench.telemetry.prometheus import parse_listen_address, require_prometheus_client

        parse_listen_address(prometheus)
        require_prometheus_client()
    if otlp is not None:
        from grpcbench.telemetry.otlp import check_url, otlp_headers, require_otel

        require_otel()
        check_url(otlp, otlp_headers(otlp_header_items))
    return prometheus is not None or otlp is not None
