"""How Go prints values, for formats that must read as ghz's byte for byte.

ghz prints with ``encoding/json``, ``fmt`` verbs and ``text/tabwriter``; a
parser written against its output may depend on any of those details.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any


def go_json(value: Any, indent: bool = False) -> str:
    """``json.Marshal`` (and ``json.Indent`` with two spaces): UTF-8 as it is, and
    <, > and & escaped as Go escapes them (they only occur inside strings)."""
    text = json.dumps(
        value, ensure_ascii=False, indent=2 if indent else None,
        separators=(",", ": ") if indent else (",", ":"),
    )  # fmt: skip
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def go_float(value: float, exponent_at: int = 21) -> str:
    """A float64 as Go's shortest form: ``%v`` (``exponent_at=21``) or
    ``strconv.FormatFloat(f, 'g', -1, 64)`` (``exponent_at=6``, Prometheus's text)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(float(value))).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # digits before the decimal point
    power = point - 1
    minus = "-" if sign else ""
    if power < -4 or power >= exponent_at:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{text}"
    if point >= len(text):
        return minus + text + "0" * (point - len(text))
    return f"{minus}{text[:point]}.{text[point:]}"


def tabwriter(rows: list[list[str]], padding: int = 3) -> str:
    """``text/tabwriter`` with minwidth 0 and ``padding``. Each row is its tab-ended
    cells and then the text after the last tab: a tab-ended cell is padded to its
    column's widest cell plus ``padding``; the last text is written as it is."""
    widths: list[int] = []
    for row in rows:
        for column, cell in enumerate(row[:-1]):
            if column == len(widths):
                widths.append(0)
            widths[column] = max(widths[column], len(cell))
    return "".join(
        "".join(cell.ljust(widths[column] + padding) for column, cell in enumerate(row[:-1]))
        + row[-1]
        + "\n"
        for row in rows
    )
