"""Reading a results file: any that grpcbench ever wrote, upgraded to the current
format, every level's numbers checked, and its profiles found beside it. A file
that cannot be read is one line naming it (``UsageError``), never a traceback."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from grpcbench.base.errors import OneLineError, UsageError
from grpcbench.base.input_files import read_input_text
from grpcbench.model.results import LevelResult, RunRecord
from grpcbench.model.results_format import upgrade


def load_run(path: Path) -> RunRecord:
    """Any results file grpcbench ever wrote, upgraded to the current format."""
    text = read_input_text(str(path), "results file")  # not a device, at most 256 MiB
    try:
        data = json.loads(text)  # RecursionError: nested thousands deep
        if not isinstance(data, dict):
            raise TypeError(f"expected a JSON object, found {type(data).__name__}")
        record = RunRecord.from_json(upgrade(data))
        for number, level in enumerate(record.levels, 1):
            _check_level(level, number)
    except OneLineError as error:
        raise UsageError(f"cannot read results file {path}: {error}") from None
    except RecursionError:
        raise UsageError(f"cannot read results file {path}: nested too deeply") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as error:
        reason = f"{type(error).__name__}: {error}" if isinstance(error, KeyError) else error
        raise UsageError(f"cannot read results file {path}: {reason}") from None
    record.levels[:] = [_profiles_found(level, path) for level in record.levels]
    return record


def _check_level(level: LevelResult, number: int) -> None:
    """A level whose fields have the wrong kind or an impossible value (a negative count,
    no server name) is refused, not rendered as negative req/s or a column "None"."""
    load = level.measured
    for name, count in load.statuses.items():
        if not isinstance(name, str) or not isinstance(count, int) or count < 0:
            raise ValueError(f"level {number}: status {name!r} has count {count!r}")
    for figure in ("wall_s", "client_cpu_s"):
        value = getattr(load, figure)
        if not isinstance(value, int | float) or not value >= 0:
            raise ValueError(f"level {number}: {figure} is {value!r}")
    for part, where in ((load, "load"), (level.plan, "plan")):
        _check_numbers(part, f"level {number}: {where}")


def _check_numbers(part: Any, where: str) -> None:
    """Every field declared ``int`` or ``float`` holds a number, ``str`` a text, and a
    summary that is not optional is there (a hand-edited or damaged file)."""
    for spec in fields(part):
        value = getattr(part, spec.name)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if spec.type in ("int", "float") and not number:
            raise ValueError(f"{where}.{spec.name} is {value!r}, not a number")
        if spec.type == "str" and not isinstance(value, str):
            raise ValueError(f"{where}.{spec.name} is {value!r}, not a text")
        if spec.type == "LatencySummary" and value is None:
            raise ValueError(f"{where}.{spec.name} is missing")


def _profiles_found(level: LevelResult, path: Path) -> LevelResult:
    """A results file moved with its ``.profiles`` folder still finds its stacks:
    a profile's file that is gone is looked up in the folder beside ``path``."""
    beside = path.with_suffix(".profiles")

    def found(profile: dict[str, Any] | None) -> dict[str, Any] | None:
        if not profile or Path(profile["file"]).exists():
            return profile
        moved = {
            key: str(beside / Path(profile[key]).name)
            for key in ("file", "speedscope")
            if profile.get(key) and (beside / Path(profile[key]).name).exists()
        }
        return {**profile, **moved}

    return replace(level, profile=found(level.profile),
                   generator_profile=found(level.generator_profile))  # fmt: skip
