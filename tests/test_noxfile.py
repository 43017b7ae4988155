"""The nox server-kind list must stay the package's default set.

Read with ``ast``: the test environment does not (and need not) have nox.
"""

import ast

from grpcbench.base.defaults import SERVERS as DEFAULT_SERVERS
from tests.conftest import REPO


def test_noxfile_server_kinds_are_the_defaults() -> None:
    tree = ast.parse((REPO / "noxfile.py").read_text())
    (value,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "SERVER_KINDS" for t in node.targets)
    ]
    assert tuple(ast.literal_eval(value)) == DEFAULT_SERVERS
