"""Server specs: the small language users type to pick a server kind.

Syntax: ``KIND[+uvloop][:key=value[,key=value...]]``, for example
``grpcio:workers=10``, ``grpclib+uvloop`` or ``grpcio-aio+uvloop``. Each key is
declared, with its type, on the kind's entry (``servers.kinds.SpecOption``).
A spec is parsed once into a frozen ``ServerSpec`` and travels as its string
(``label``) to the server subprocess, so both sides agree on what runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grpcbench.base.errors import UsageError
from grpcbench.servers.kinds import KINDS, OptionValue, ServerKindInfo, SpecOption, kinds_serving
from grpcbench.services.base import SHORTHANDS, ServiceDefinition


@dataclass(frozen=True)
class ServerSpec:
    kind: str
    uvloop: bool = False
    options: tuple[tuple[str, OptionValue], ...] = field(default=())

    @property
    def label(self) -> str:
        """Canonical spec string; also the column header in tables."""
        text = self.kind + ("+uvloop" if self.uvloop else "")
        declared = {option.name: option for option in self.info.options}
        shown = [
            f"{name}={SpecOption.text(value)}"
            for name, value in self.options
            if value != declared[name].default or declared[name].shown
        ]
        return text + (":" + ",".join(shown) if shown else "")

    def option(self, name: str) -> OptionValue:
        return dict(self.options)[name]

    def count(self, name: str) -> int:
        """A count option's value (``workers``), typed for arithmetic."""
        value = self.option(name)
        assert isinstance(value, int) and not isinstance(value, bool), name
        return value

    @property
    def info(self) -> ServerKindInfo:
        return KINDS[self.kind]


def parse_server_spec(text: str) -> ServerSpec:
    """Parse and validate one spec, filling in the kind's default options."""
    head, _, option_text = text.strip().partition(":")
    kind, plus, modifier = head.partition("+")
    if kind not in KINDS:
        known = ", ".join(sorted(KINDS))
        raise UsageError(f"unknown server kind {kind!r} in {text!r} (known kinds: {known})")
    info = KINDS[kind]
    if plus and modifier != "uvloop":
        raise UsageError(f"unknown modifier {'+' + modifier!r} in {text!r} (only +uvloop exists)")
    if plus and not info.supports_uvloop:
        raise UsageError(f"server kind {kind!r} is synchronous and cannot run on uvloop")
    declared = {option.name: option for option in info.options}
    options: dict[str, OptionValue] = {option.name: option.default for option in info.options}
    if option_text:
        for pair in option_text.split(","):
            name, eq, value = pair.partition("=")
            name = name.strip()
            if name not in declared:
                allowed = ", ".join(declared) or "none"
                raise UsageError(f"unknown option {name!r} for {kind!r} (allowed: {allowed})")
            options[name] = declared[name].parse(value if eq else "", text)
    return ServerSpec(kind=kind, uvloop=bool(plus), options=tuple(options.items()))


def parse_server_specs(values: list[str]) -> tuple[ServerSpec, ...]:
    """Accept repeated options and/or space/semicolon separated lists.

    Commas cannot separate specs because they separate a spec's options
    (``grpcio:workers=10,processes=2``), so lists use spaces or semicolons.
    """
    specs: list[ServerSpec] = []
    for value in values:
        for item in value.replace(";", " ").split():
            specs.append(parse_server_spec(item))
    if not specs:
        raise UsageError("no server kinds given")
    labels = [s.label for s in specs]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise UsageError(f"server given twice: {', '.join(duplicates)}")
    return tuple(specs)


def check_served(service: ServiceDefinition, kind: str) -> None:
    """One clear error when ``service`` has no servicers for server ``kind`` (its own,
    or those of the kind it reuses: ``servicers_from``)."""
    info = KINDS[kind]
    needed = info.servicer_kind
    if needed in service.kinds_served():
        return
    has = ", ".join(kinds_serving(service.kinds_served())) or "none"
    reuses = f" (it serves {needed}'s servicers)" if info.servicers_from else ""
    shorthand = f" or {SHORTHANDS[needed]}" if needed in SHORTHANDS else ""
    raise UsageError(
        f"service {service.name} has no servicer for server kind {kind}{reuses}"
        f" (servicers[{needed!r}]{shorthand} is not set; it serves: {has})"
    )
