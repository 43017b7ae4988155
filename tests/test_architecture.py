"""The package's shape: no import cycles, and each registry names modules that exist."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from grpcbench.base.references import load_reference

PACKAGE = Path(__file__).resolve().parents[1] / "grpcbench"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for path in PACKAGE.rglob("*.py")
        if "proto" not in path.relative_to(PACKAGE).parts  # generated stubs
    }


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The grpcbench module an imported name lives in (``a.b.c`` -> ``a.b`` if c is a name)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """module -> grpcbench modules it imports, at module level *or* inside functions.

    Imports under ``if TYPE_CHECKING:`` do not run, so they are left out."""
    known = _modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text())
        skipped = {
            id(child)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _is_type_checking(node)
            for child in ast.walk(node)
        }
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                resolved = _resolve(target, known)
                if resolved and resolved != name:
                    graph[name].add(resolved)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a"}}) is None


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    # commands imports the runner only inside run_benchmark
    assert "grpcbench.run.runner" in graph["grpcbench.cli.commands"]
    assert "grpcbench.load.driver" in graph["grpcbench.load.builtin"]


def test_no_import_cycles_in_the_package() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("registry", ["drivers", "exporters", "targets"])
def test_every_registry_entry_imports(registry: str) -> None:
    from grpcbench.load.catalogue import DRIVERS
    from grpcbench.report.exporters import EXPORTERS
    from grpcbench.targets import TARGET_TYPES

    references = {
        "drivers": [info.factory for info in DRIVERS.values()]
        + [info.workload_check for info in DRIVERS.values() if info.workload_check],
        "exporters": [info.render for info in EXPORTERS.values()]
        + [info.requires for info in EXPORTERS.values() if info.requires],
        "targets": list(TARGET_TYPES.values()),
    }[registry]
    for reference in references:
        assert callable(load_reference(reference)), reference


def test_the_wire_transport_is_a_lower_layer() -> None:
    """The HTTP/2 transport knows nothing of load loops, results or reports: it reads
    only how to reach the target (rpc.security, rpc.client_options) and what gRPC's
    status codes are called (rpc.status_names)."""
    graph = import_graph()
    wire = [name for name in graph if name.startswith("grpcbench.wire")]
    assert wire
    upward = {
        (name, target)
        for name in wire
        for target in graph[name]
        if not target.startswith(("grpcbench.wire", "grpcbench.rpc.security",
                                  "grpcbench.rpc.client_options", "grpcbench.rpc.status_names",
                                  "grpcbench.base.parsing",
                                  "grpcbench.base.errors"))
    }  # fmt: skip
    assert not upward, f"the wire transport imports upwards: {sorted(upward)}"


# The layers, lowest first. A module may import its own package and any package of a
# lower layer, nothing else: an upward or sideways import fails here without anyone
# listing it, and a new package fails until it is given its place.
LAYERS: list[tuple[str, ...]] = [
    ("base",),  # errors, parsing, declarations, secrets, units, child processes
    ("contract",),  # the call contract: CallStats, CallFunction, Workload, UnaryPlan
    ("stats", "proto", "observe", "profile"),  # histograms, stubs, process usage, py-spy
    ("backing",),  # embedded S3, MongoDB, PostgreSQL; MySQL
    ("services",),  # the benchmark services and their registry
    ("rpc",),  # calling any method: schemas, templates, security, pre-flight
    ("wire",),  # the HTTP/2 client transport
    ("model",),  # plans, settings, results, verdicts, thresholds, the results format
    ("capacity", "servers"),  # the capacity search's rules and records; server kinds
    ("targets",),  # what a column measures: a started server or a running one
    ("load",),  # the load drivers and loops
    ("report", "telemetry"),  # tables, charts, exporters, comparisons; live telemetry
    ("history",),  # the results store, figures over runs, change points
    ("run",),  # options, the runner, a level's measurement, the capacity runner
    ("cli",),  # the command line, its commands, the pytest plugin
]
RANK = {package: rank for rank, packages in enumerate(LAYERS) for package in packages}
ROOT_MODULES = {"grpcbench": 0, "grpcbench.__main__": len(LAYERS)}


def _layer(module: str) -> tuple[str, int]:
    """(package, rank) of a grpcbench module."""
    if module in ROOT_MODULES:
        return module, ROOT_MODULES[module]
    package = module.split(".")[1]
    assert package in RANK, f"{module}: grpcbench.{package} has no place in LAYERS"
    return package, RANK[package]


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every (importer, imported) pair that does not go to a lower layer."""
    found = []
    for importer, imported in sorted(graph.items()):
        package, rank = _layer(importer)
        for target in sorted(imported):
            target_package, target_rank = _layer(target)
            if target_package != package and target_rank >= rank:
                found.append((importer, target))
    return found


def test_every_module_lives_in_a_layer() -> None:
    for module in import_graph():
        _layer(module)


def test_imports_only_go_down_the_layers() -> None:
    upward = upward_imports(import_graph())
    assert not upward, "imports that are not downward:\n" + "\n".join(
        f"  {a} ({_layer(a)[0]}) -> {b} ({_layer(b)[0]})" for a, b in upward
    )


def test_the_layer_check_catches_upward_and_sideways_imports() -> None:
    graph = {
        "grpcbench.model.plan": {"grpcbench.load.engine", "grpcbench.base.errors"},
        "grpcbench.servers.kinds": {"grpcbench.capacity.slo"},
        "grpcbench.load.engine": {"grpcbench.load.calls", "grpcbench.model.plan"},
    }
    assert upward_imports(graph) == [
        ("grpcbench.model.plan", "grpcbench.load.engine"),
        ("grpcbench.servers.kinds", "grpcbench.capacity.slo"),
    ]


def test_calls_are_spoken_of_through_the_contract() -> None:
    """rpc and load make and count calls through ``contract``, never through the
    plugin module: what they take from ``services.base`` is the plugin itself."""
    graph = import_graph()
    through_plugin = sorted(
        name
        for name in graph
        if name.startswith(("grpcbench.rpc", "grpcbench.load", "grpcbench.wire"))
        and "grpcbench.services.base" in graph[name]
        and "ServiceDefinition"
        not in (PACKAGE.parent / (name.replace(".", "/") + ".py")).read_text()
    )
    assert not through_plugin, through_plugin
    assert "grpcbench.contract.calls" in graph["grpcbench.load.engine"]


def test_a_report_of_saved_results_starts_nothing_heavy() -> None:
    """Rendering a saved capacity search reads the model: not the runner, the load
    engine, or grpc."""
    import subprocess
    import sys

    probe = (
        "import sys, grpcbench.report.capacity, grpcbench.report.table;"
        "print(' '.join(m for m in ('grpc', 'grpcbench.run.runner', 'grpcbench.load.engine',"
        " 'grpcbench.wire.connection') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert loaded == []


def test_no_module_level_run_state() -> None:
    """A run's state lives in its RunContext: preparation keeps no backing list,
    CPU set or cancel flag at module level."""
    import grpcbench.base.preparation as preparation

    for name in ("backing", "backing_cpus", "_cancelled", "_starting"):
        assert not hasattr(preparation, name), name


# A module past this many lines holds more than one concept (issue 49's house rule).
MAX_MODULE_LINES = 400


def test_no_module_is_over_the_line_limit() -> None:
    """Each module one concept: the generated stubs aside, none runs past 400 lines."""
    long = {
        name: lines
        for name, path in _modules().items()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"split these by concern: {long}"
