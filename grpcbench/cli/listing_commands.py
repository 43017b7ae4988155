"""The commands that list what there is: a server's services and methods (``list``,
``describe``, as grpcurl's), the server kinds and the scenarios."""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape

from grpcbench.base.errors import UsageError
from grpcbench.cli.consoles import Consoles
from grpcbench.model.scenario import Scenario
from grpcbench.rpc.settings import CallArgs

# Where `list` and `describe` print other than grpcurl v1.9 given the same question:
# tests/conformance/test_grpcurl_conformance.py allows a case only the differences
# it lists from this table (docs/own-service.md renders it).
GRPCURL_DIFFERENCES: dict[str, str] = {}


def _catalog(address: str | None, args: CallArgs, insecure: bool) -> Any:
    """``list``/``describe``'s schema: a file's, or the server's reflection."""
    from grpcbench.rpc.catalog import open_catalog

    if insecure and args.security.tls:
        raise UsageError("--insecure (plaintext) contradicts the TLS options")
    args.security.check()
    paths = tuple(p.strip() for p in (args.import_paths or "").split(",") if p.strip())
    metadata = "{}"
    if args.reflect_metadata:
        from grpcbench.rpc.metadata_text import read_metadata

        metadata = read_metadata((args.reflect_metadata,), None)
    security = args.security.resolve(address) if address else args.security
    return open_catalog(address, security, args.proto, paths, args.protoset, metadata)


def list_symbols(
    address: str | None, service: str | None, args: CallArgs, insecure: bool, consoles: Consoles
) -> int:
    """``grpcbench list``: services, one per line, or ``service``'s methods."""
    if address and not service and (args.proto or args.protoset) and ":" not in address:
        address, service = None, address  # `list --proto x.proto SERVICE`, as grpcurl
    with _catalog(address, args, insecure) as catalog:
        for name in catalog.methods(service) if service else catalog.services:
            consoles.out.print(name, highlight=False, markup=False)
    return 0


def describe_symbol(
    address: str | None, symbol: str | None, args: CallArgs, insecure: bool, consoles: Consoles
) -> int:
    """``grpcbench describe``: a symbol's .proto text; without one, every service's."""
    if address and symbol is None and (args.proto or args.protoset) and ":" not in address:
        address, symbol = None, address  # `describe --proto x.proto SYMBOL`, as grpcurl
    with _catalog(address, args, insecure) as catalog:
        symbols = [symbol] if symbol else catalog.services
        consoles.out.print(
            "\n".join(catalog.describe(name) for name in symbols), highlight=False, markup=False
        )
    return 0


def list_servers(consoles: Consoles) -> int:
    from grpcbench.base import defaults
    from grpcbench.servers.kinds import KINDS

    for info in KINDS.values():
        consoles.out.print(
            f"[bold]{escape(info.syntax)}[/]  {escape(info.description)}", highlight=False
        )
    consoles.out.print(f"default set: {' '.join(defaults.SERVERS)}", highlight=False)
    return 0


def list_scenarios(as_json: bool, consoles: Consoles) -> int:
    from grpcbench.model.scenario import load_scenario, scenario_files

    found = {name: load_scenario(str(path)) for name, path in scenario_files().items()}
    if as_json:
        consoles.out.print_json(
            json.dumps(
                {n: {"description": s.description, "path": s.path} for n, s in found.items()}
            )
        )
        return 0
    for name, chosen in found.items():
        consoles.out.print(
            f"[bold]{name}[/]  {chosen.description}  ({chosen.path})", highlight=False
        )
        for variant, missing in unavailable_variants(chosen).items():
            consoles.out.print(f"    variant {variant}: {missing}", highlight=False)
    return 0


def unavailable_variants(scenario: Scenario) -> dict[str, str]:
    """Variant -> "not available on KINDS: why", for variants some server kinds cannot run."""
    from grpcbench.servers.kinds import KINDS
    from grpcbench.services.registry import load_service

    service = load_service(scenario.service)
    if service.unavailable is None:
        return {}
    found = {}
    for variant in scenario.variants:
        params = {**scenario.workload_params, **variant.params}
        reasons = {
            kind: service.unavailable(info.servicer_kind, params) for kind, info in KINDS.items()
        }
        kinds = [kind for kind, reason in reasons.items() if reason]
        if kinds:
            found[variant.name] = f"not available on {', '.join(kinds)} ({reasons[kinds[0]]})"
    return found
