"""ghz's call template data, so a ghz user's ``-d``/``-m`` work unchanged.

ghz runs Go's text/template over the data and metadata JSON for every call.
grpcbench supports what ghz documents for call data (``www/docs/calldata.md``):
the fields ``{{.WorkerID}}``, ``{{.RequestNumber}}``, ``{{.FullyQualifiedName}}``,
``{{.MethodName}}``, ``{{.ServiceName}}``, ``{{.InputName}}``, ``{{.OutputName}}``,
``{{.IsClientStreaming}}``, ``{{.IsServerStreaming}}``, ``{{.Timestamp}}``,
``{{.TimestampUnix}}``, ``{{.TimestampUnixMilli}}``, ``{{.TimestampUnixNano}}``,
``{{.UUID}}``, ghz's functions ``{{newUUID}}``, ``{{randomString N}}`` and
``{{randomInt MIN MAX}}``, and Sprig's common ones (``rpc.sprig_functions``), in Go's
action syntax: arguments, parentheses and pipelines (``rpc.go_template``). Anything
else is refused before the run, naming what is supported, rather than sent as
literal text. The values are
ghz's: ``.ServiceName``, ``.InputName`` and ``.OutputName`` are short names,
``.Timestamp`` is RFC 3339 to the second. ghz's ``--disable-template-data``
sends the text as it is (``templates="off"``); ``--disable-template-functions``
keeps the data fields and refuses every function (``"no-functions"``).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from grpcbench.base.errors import UsageError
from grpcbench.rpc.go_template import compile_expression, go_text
from grpcbench.rpc.sprig_functions import FUNCTIONS

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
FIELDS = (
    "WorkerID", "RequestNumber", "FullyQualifiedName", "MethodName", "ServiceName", "InputName",
    "OutputName", "IsClientStreaming", "IsServerStreaming", "Timestamp", "TimestampUnix",
    "TimestampUnixMilli", "TimestampUnixNano", "UUID",
)  # fmt: skip
TemplateUse = Literal["all", "no-functions", "off"]


@dataclass(frozen=True)
class MethodNames:
    """The fields of the template data that name the method (fixed for a run)."""

    call: str  # package.Service/Method
    input_name: str
    output_name: str
    client_streaming: bool
    server_streaming: bool


# The virtual user a call belongs to, where a task does not say it: an open loop's
# calls each run in a task of their own, and set their worker (one of c) here.
CURRENT_WORKER: ContextVar[int | None] = ContextVar("CURRENT_WORKER", default=None)


@dataclass(frozen=True)
class WorkerIds:
    """ghz's ``{{.WorkerID}}``: "g<worker>c<connection>" (runner/requester.go), after
    the run's --name and a colon when it has one. Workers are numbered across the
    level's generators: this one's first is ``first``; worker n uses connection
    n mod the level's connections, as ghz assigns them."""

    first: int = 0
    connections: int = 1
    prefix: str = ""

    def __call__(self, user: int) -> str:
        number = self.first + user
        worker = f"g{number}c{number % max(1, self.connections)}"
        return f"{self.prefix}:{worker}" if self.prefix else worker


def _go(value: Any) -> str:
    """Go's text/template prints booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def call_fields(names: MethodNames, worker_id: str, request_number: int) -> dict[str, str]:
    """The template data of one call, as ghz builds it."""
    now_ns = time.time_ns()
    service, _, method = names.call.partition("/")
    return {
        "WorkerID": worker_id,
        "RequestNumber": str(request_number),
        "FullyQualifiedName": f"{service}.{method}",
        "MethodName": method,
        "ServiceName": service.rpartition(".")[2],  # ghz: the descriptor's short name
        "InputName": names.input_name.rpartition(".")[2],
        "OutputName": names.output_name.rpartition(".")[2],
        "IsClientStreaming": _go(names.client_streaming),
        "IsServerStreaming": _go(names.server_streaming),
        # Go's time.RFC3339: to the second, Z for UTC.
        "Timestamp": datetime.fromtimestamp(now_ns // 1_000_000_000, UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        ),
        "TimestampUnix": str(now_ns // 1_000_000_000),
        "TimestampUnixMilli": str(now_ns // 1_000_000),
        "TimestampUnixNano": str(now_ns),
        "UUID": str(uuid.uuid4()),
    }


Piece = Callable[[Mapping[str, str]], str]


def _compile_action(action: str, templates: TemplateUse) -> Piece:
    words = action.split()
    if len(words) == 1 and words[0].startswith(".") and words[0][1:] in FIELDS:
        name = words[0][1:]
        return lambda data: data[name]  # the common case, without the evaluator
    functions = {} if templates == "no-functions" else FUNCTIONS
    try:
        node = compile_expression(action, functions, FIELDS)
    except UsageError as error:
        if templates == "no-functions" and "not defined" in str(error):
            named = re.search(r'function "([^"]+)"', str(error))
            raise UsageError(
                f"template action {{{{{action}}}}}: function"
                f" {named.group(1) if named else words[0]!r} not defined"
                " (--disable-template-functions: only the data fields, such as .RequestNumber)"
            ) from None
        raise
    return lambda data: go_text(node(data))


class Template:
    """A text with ghz template actions, compiled once, rendered per call."""

    def __init__(self, text: str, templates: TemplateUse = "all") -> None:
        """``templates``: "off" sends ``text`` as it is (ghz's --disable-template-data)."""
        self.text = text
        self.pieces: list[str | Piece] = []
        position = 0
        actions = () if templates == "off" else _ACTION.finditer(text)
        for match in actions:
            self.pieces.append(text[position : match.start()])
            self.pieces.append(_compile_action(match.group(1), templates))
            position = match.end()
        self.pieces.append(text[position:])
        self.fixed = len(self.pieces) == 1

    def render(self, data: Mapping[str, str]) -> str:
        if self.fixed:
            return self.text
        return "".join(piece if isinstance(piece, str) else piece(data) for piece in self.pieces)
