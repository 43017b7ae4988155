"""The OTLP headers the OpenTelemetry SDK takes from the environment, checked as ours are.

The SDK adds ``OTEL_EXPORTER_OTLP_METRICS_HEADERS`` (else ``OTEL_EXPORTER_OTLP_HEADERS``)
to every push, and logs a malformed item with its value, a secret as often as not. So
grpcbench parses the variable first, with the SDK's own parser and its warnings
caught: a malformed one is one line naming the variable, never its value, and
headers from it, like ``--otlp-header``, never cross the network in plaintext.
"""

from __future__ import annotations

import logging
import os

from grpcbench.base.errors import UsageError

VARIABLES = ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
SDK_PARSER_LOGGER = "opentelemetry.util.re"  # logs each malformed item, value included


def environment_headers() -> tuple[str, dict[str, str]]:
    """The variable the SDK takes its headers from (the first set of ``VARIABLES``, as
    the SDK chooses) and its headers; ("", {}) when neither is set."""
    from opentelemetry.util.re import parse_env_headers

    for name in VARIABLES:
        value = os.environ.get(name)
        if not value:
            continue
        caught = _Caught()
        logger = logging.getLogger(SDK_PARSER_LOGGER)
        logger.addFilter(caught)
        try:
            headers = dict(parse_env_headers(value, liberal=True))
        finally:
            logger.removeFilter(caught)
        if caught.records:
            raise UsageError(
                f"{name} is not KEY=VALUE,KEY=VALUE (its value is not shown: it may hold a secret)"
            )
        return name, headers
    return "", {}


class _Caught(logging.Filter):
    """Takes the SDK parser's warnings (each names a malformed item, value and all)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.append(record)
        return False  # never shown
