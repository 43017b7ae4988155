"""The nox server-kind list must stay the package's default set."""

import importlib.util

from grpcbench.servers.kinds import DEFAULT_SERVERS
from tests.conftest import REPO


def test_noxfile_server_kinds_are_the_defaults() -> None:
    spec = importlib.util.spec_from_file_location("noxfile", REPO / "noxfile.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert tuple(module.SERVER_KINDS) == DEFAULT_SERVERS
