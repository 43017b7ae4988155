"""Target kinds: what a column of the tables measures.

One module per kind, implementing ``TargetPlan`` (what the options hold) and
``Target`` (what is open while its levels run), plus one line here.
"""

from __future__ import annotations

from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.references import load_reference
from grpcbench.targets.base import Target, TargetContext, TargetPlan

# kind -> "module:Class" of its TargetPlan, imported only when used.
TARGET_KINDS: dict[str, str] = {
    "server": "grpcbench.targets.started:StartedServerPlan",
    "external": "grpcbench.targets.external:ExternalTargetPlan",
}


def make_target_plan(kind: str, **fields: Any) -> TargetPlan:
    if kind not in TARGET_KINDS:
        raise UsageError(f"unknown target kind {kind!r} (known: {', '.join(TARGET_KINDS)})")
    plan: TargetPlan = load_reference(TARGET_KINDS[kind])(**fields)
    return plan


__all__ = ["TARGET_KINDS", "Target", "TargetContext", "TargetPlan", "make_target_plan"]
