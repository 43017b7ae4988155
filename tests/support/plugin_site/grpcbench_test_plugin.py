"""A plugin package of the tests' own: a driver, a server kind and an exporter,
declared through entry points (its dist-info beside it), with no grpcbench file
changed. ``tests/test_plugins.py`` puts this directory on PYTHONPATH.

- ``plugin-builtin``: the built-in engine under another name, declaring only the
  open loop among the features (so a per-request run is refused by its declaration).
- ``grpcio-gzip``: grpcio's servicers (``servicers_from``) on a sync server whose
  replies are gzip-compressed when its flag ``gzip`` is true.
- ``tsv``: one tab-separated row per level.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from grpcbench.load.builtin import BuiltinDriver
from grpcbench.load.catalogue import DriverInfo
from grpcbench.load.driver import DriverSettings
from grpcbench.model.results import RunRecord
from grpcbench.report.exporters import ExporterInfo
from grpcbench.servers.kinds import ServerKindInfo, SpecOption

DRIVER = DriverInfo(
    name="plugin-builtin",
    description="the tests' plugin driver (the built-in engine, renamed)",
    factory="grpcbench_test_plugin:create_driver",
    features=frozenset({"open_loop"}),
    runs_here=True,
    uses_client_stack=True,
)
KIND = ServerKindInfo(
    name="grpcio-gzip",
    description="the tests' plugin kind: grpcio's servicers, replies gzip-compressed",
    module="grpcbench_test_plugin",
    supports_uvloop=False,
    options=(
        SpecOption("gzip", "flag", False, "compress every reply", shown=True),
        SpecOption("workers", "count", 4, "thread-pool size"),
        SpecOption("processes", "count", 1, "processes sharing the port"),
    ),
    servicers_from="grpcio",
)
EXPORTER = ExporterInfo(
    "tsv", "the tests' plugin format: a tab-separated row per level",
    "grpcbench_test_plugin:render_tsv", True,
)  # fmt: skip


class RenamedBuiltin(BuiltinDriver):
    name = DRIVER.name

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        return replace(await super().run(*args, **kwargs), driver=self.name)


def create_driver(settings: DriverSettings) -> RenamedBuiltin:
    return RenamedBuiltin(processes=settings.client_processes)


def serve(service: Any, spec: Any, params: Mapping[str, Any], host: str, port: int) -> None:
    import grpc

    from grpcbench.servers import grpcio_sync

    log = os.environ.get("GRPCBENCH_TEST_PLUGIN_LOG")
    if log:
        with open(log, "a") as file:
            file.write(f"{spec.label} gzip={spec.option('gzip')!r}\n")
    compression = grpc.Compression.Gzip if spec.option("gzip") else None
    grpcio_sync.serve(service, spec, params, host, port, compression)


def render_tsv(record: RunRecord) -> bytes:
    rows = ["server\tdriver\tconcurrency\tcount\tok"] + [
        f"{lv.server}\t{lv.driver}\t{lv.plan.concurrency}\t{lv.measured.count}\t{lv.measured.ok}"
        for lv in record.levels
    ]
    return ("\n".join(rows) + "\n").encode()
