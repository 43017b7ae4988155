"""The scenario a run measures: its file, with the service's params given on the
command line applied and checked by the service that reads them, and the variants
chosen."""

from __future__ import annotations

from dataclasses import replace

from grpcbench.base.errors import OneLineError, UsageError
from grpcbench.base.parsing import parse_params
from grpcbench.base.secrets import redact
from grpcbench.model.scenario import Scenario, Variant, load_scenario
from grpcbench.run.arguments import RunArgs
from grpcbench.services.base import ServiceDefinition
from grpcbench.services.params import check_params
from grpcbench.services.registry import load_service


def resolve_scenario(args: RunArgs) -> tuple[Scenario, ServiceDefinition]:
    """The scenario with its overrides, every param checked by the service that reads it."""
    chosen = load_scenario(args.scenario)
    if args.service is not None and args.service != chosen.service:
        # The scenario's params and variants are its own service's, not this one's.
        chosen = replace(
            chosen, service=args.service, server_params={}, workload_params={}, variants=(),
            default_variants=(),
        )  # fmt: skip
    service = load_service(chosen.service)  # fail here, not inside a server process
    owner = f"service {chosen.service} (scenario {chosen.name})"
    declared = service.server_params
    for name, value in args.named_server_params().items():
        option = "--" + name.replace("_", "-")
        if declared is None:
            continue
        if name not in declared:
            raise UsageError(
                f"{option} does not apply to scenario {chosen.name}"
                f" (its service {chosen.service} has no {name} parameter)"
            )
        try:
            declared[name].check(name, value)
        except OneLineError as error:
            if declared[name].validate is not None:  # its own words
                raise UsageError(str(error)) from None
            raise UsageError(
                f"bad {option} {redact(value) if isinstance(value, str) else value!r}:"
                f" expected {declared[name].describe()}"
            ) from None
    server = {
        **chosen.server_params,
        **parse_params(list(args.server_params), "--server-param"),
        **args.named_server_params(),
    }
    workload = {
        **chosen.workload_params,
        **parse_params(list(args.workload_params), "--workload-param"),
    }
    variants = tuple(
        Variant(v.name, check_params(owner, f"workload param of variant {v.name}",
                                     service.workload_params, v.params))
        for v in choose_variants(chosen, args.variants)
    )  # fmt: skip
    server = check_params(owner, "server param", declared, server)
    chosen = replace(
        chosen,
        server_params=service.complete_params(server) if service.complete_params else server,
        workload_params=check_params(owner, "workload param", service.workload_params, workload),
        variants=variants,
    )
    return chosen, service


def choose_variants(scenario: Scenario, names: str | None) -> tuple[Variant, ...]:
    """--variants, else the scenario's default list, else all of its variants."""
    if not names:
        if scenario.default_variants:
            return tuple(v for v in scenario.variants if v.name in scenario.default_variants)
        return scenario.variants
    known = {variant.name: variant for variant in scenario.variants}
    chosen = []
    for name in (n.strip() for n in names.split(",")):
        if name not in known:
            listed = ", ".join(known) or "none"
            raise UsageError(f"unknown variant {name!r} of {scenario.name} (variants: {listed})")
        chosen.append(known[name])
    return tuple(chosen)
