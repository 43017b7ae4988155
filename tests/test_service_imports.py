"""A bundled service's module imports neither server framework: each server kind's
stubs are imported where that kind registers them (``services.base.generated_routes``),
so a grpcio server child never imports grpclib and h2, nor a grpclib child grpc."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, cast

import pytest

FRAMEWORKS = ("grpc", "grpclib", "h2")


@pytest.mark.parametrize("service", ["hello", "users", "objects", "watch"])
def test_a_service_module_imports_no_server_framework(service: str) -> None:
    probe = (
        f"import sys, grpcbench.services.{service}; "
        f"print(','.join(m for m in {FRAMEWORKS!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", probe], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == ""


def _grpclib_servicers() -> list[tuple[str, Any]]:
    from grpcbench.services import hello, objects, users
    from grpcbench.services.watch_grpclib import GrpclibWatch
    from grpcbench.services.watch_store import FolderCache

    return [
        ("helloworld.Greeter", hello.GrpclibGreeter()),
        ("users.Users", users.GrpclibUsers(store=cast(Any, None))),
        ("objects.ObjectStore", objects.GrpclibObjects({})),
        ("watch.StreamBench", GrpclibWatch(FolderCache({"pairs": 1, "folders": ["small"]}))),
    ]


def test_a_grpclib_servicer_takes_its_routes_from_the_generated_base() -> None:
    for service_name, servicer in _grpclib_servicers():
        routes = servicer.__mapping__()
        assert routes, service_name
        for path, handler in routes.items():
            assert path.startswith(f"/{service_name}/")
            method = path.rsplit("/", 1)[1]
            assert handler.func == getattr(servicer, method)  # bound to this servicer
