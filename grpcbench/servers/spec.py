"""Server specs: the small language users type to pick a server kind.

Syntax: ``KIND[+uvloop][:key=value[,key=value...]]``, for example
``grpcio:workers=10``, ``grpclib+uvloop`` or ``grpcio-aio+uvloop``.
A spec is parsed once into a frozen ``ServerSpec`` and travels as its string
(``label``) to the server subprocess, so both sides agree on what runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grpcbench.base.errors import UsageError
from grpcbench.servers.kinds import KINDS, ServerKindInfo


@dataclass(frozen=True)
class ServerSpec:
    kind: str
    uvloop: bool = False
    options: tuple[tuple[str, int], ...] = field(default=())

    @property
    def label(self) -> str:
        """Canonical spec string; also the column header in tables."""
        text = self.kind + ("+uvloop" if self.uvloop else "")
        defaults = dict(self.info.default_options)
        shown = [
            f"{name}={value}"
            for name, value in self.options
            if value != defaults[name] or name in self.info.always_shown
        ]
        return text + (":" + ",".join(shown) if shown else "")

    def option(self, name: str) -> int:
        return dict(self.options)[name]

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
    options = dict(info.default_options)
    if option_text:
        for pair in option_text.split(","):
            name, eq, value = pair.partition("=")
            name = name.strip()
            if name not in options:
                allowed = ", ".join(options) or "none"
                raise UsageError(f"unknown option {name!r} for {kind!r} (allowed: {allowed})")
            if not eq or not value.strip().isdecimal() or int(value) <= 0:
                raise UsageError(f"bad value in {text!r}: {name} must be a positive integer")
            options[name] = int(value)
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
