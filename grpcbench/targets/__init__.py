"""Target types: what a column of the tables measures.

One module per type, implementing ``TargetPlan`` (what the options hold) and
``Target`` (what is open while its levels run), plus one line here.
"""

from __future__ import annotations

from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.references import load_reference
from grpcbench.targets.base import Target, TargetContext, TargetPlan

# type -> "module:Class" of its TargetPlan, imported only when used.
TARGET_TYPES: dict[str, str] = {
    "server": "grpcbench.targets.started:StartedServerPlan",
    "external": "grpcbench.targets.external:ExternalTargetPlan",
}


def make_target_plan(target_type: str, **fields: Any) -> TargetPlan:
    if target_type not in TARGET_TYPES:
        known = ", ".join(TARGET_TYPES)
        raise UsageError(f"unknown target type {target_type!r} (known: {known})")
    plan: TargetPlan = load_reference(TARGET_TYPES[target_type])(**fields)
    return plan


__all__ = ["TARGET_TYPES", "Target", "TargetContext", "TargetPlan", "make_target_plan"]
