"""Parameters a service understands, declared by the service and checked before a run.

The service that reads a parameter owns its name, type and limits, so a typo
(``concurency``), a misplaced option (``--io-delay-ms`` on hello) or a bad value
is one clear error before anything starts, instead of being silently ignored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from grpcbench.base.errors import OneLineError, UsageError


@dataclass(frozen=True)
class Param:
    value_type: type  # int, float, str, bool or list
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    pattern: str = ""  # a string must match this regular expression (whole)
    # Any further check the owner needs; raises UsageError (e.g. a size no message has).
    validate: Callable[[Any], object] | None = None
    # A credential (a token): masked wherever params are printed or saved.
    secret: bool = False

    def check(self, name: str, value: Any) -> Any:
        """``value`` converted to this parameter's value type, or one clear error."""
        bad = UsageError(f"bad value {value!r} for {name}: expected {self.describe()}")
        if self.value_type is bool:
            if not isinstance(value, bool):
                raise bad
        elif self.value_type in (int, float):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise bad
            if self.value_type is int and value != int(value):
                raise bad
            value = self.value_type(value)
            if not math.isfinite(value) or (self.minimum is not None and value < self.minimum):
                raise bad  # nan passes every comparison; inf is no amount
        elif self.value_type is list:
            if not isinstance(value, list):
                raise bad
        else:
            value = str(value)
            if self.choices and value not in self.choices:
                raise bad
            if self.pattern and not re.fullmatch(self.pattern, value):
                raise bad
        if self.validate is not None:
            self.validate(value)
        return value

    def describe(self) -> str:
        if self.pattern:
            return f"a value matching {self.pattern}"
        if self.choices:
            return " or ".join(self.choices)
        text = {bool: "true or false", int: "an integer", float: "a number", list: "a list"}.get(
            self.value_type, "a string"
        )
        return text + (f" >= {self.minimum:g}" if self.minimum is not None else "")


Params = Mapping[str, Param]


def check_params(
    owner: str, where: str, declared: Params | None, given: Mapping[str, Any]
) -> dict[str, Any]:
    """``given`` with each value converted; an unknown name is an error naming the known ones.

    ``declared`` None means the service declares nothing (a third-party service
    written before declarations existed): everything passes unchanged."""
    if declared is None:
        return dict(given)
    checked = {}
    for name, value in given.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise UsageError(f"unknown {where} {name!r} of {owner} (known: {known})")
        try:
            checked[name] = declared[name].check(name, value)
        except OneLineError as error:
            raise UsageError(f"{where} of {owner}: {error}") from None
    return checked


def secret_names(*declared: Params | None) -> frozenset[str]:
    """The names of the parameters declared secret."""
    return frozenset(
        name for params in declared if params for name, param in params.items() if param.secret
    )
