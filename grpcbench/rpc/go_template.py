"""Go text/template actions as ghz evaluates them: fields, literals, function calls,
parentheses and pipelines (``{{ .MethodName | upper }}``, ``{{ add 1 (mul 2 3) }}``),
over ghz's functions and Sprig's common ones (``rpc.sprig_functions``).

An action is compiled once, when the run starts: an unknown function or a bad
literal is one line before any load, as Go's parse fails before ghz sends a call.
Control actions (if, range, with, variables) are refused by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from grpcbench.base.errors import UsageError

Value = Any
Node = Callable[[Mapping[str, str]], Value]

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<string>"(?:[^"\\]|\\.)*") | (?P<raw>`[^`]*`) |
      (?P<number>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?) |
      (?P<field>\.[A-Za-z_]\w*) | (?P<name>[A-Za-z_]\w*) |
      (?P<punct>[|()]) | (?P<other>\S)
    )""",
    re.X,
)
_CONTROL = {"if", "else", "end", "range", "with", "define", "template", "block", "break",
            "continue"}  # fmt: skip
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}


def go_text(value: Value) -> str:
    """A value as text/template prints it (fmt's %v)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e21 else f"{int(value)}"
    if isinstance(value, list):
        return "[" + " ".join(go_text(item) for item in value) + "]"
    return str(value)


class _Parser:
    def __init__(
        self, action: str, functions: Mapping[str, Callable[..., Value]], fields: Collection[str]
    ) -> None:
        self.action = action
        self.functions = functions
        self.fields = fields
        self.uses_fields = False
        self.tokens = [(m.lastgroup or "", m.group(m.lastgroup or 0)) for m in
                       _TOKEN.finditer(action) if m.lastgroup]  # fmt: skip
        self.at = 0

    def bad(self, problem: str) -> UsageError:
        return UsageError(f"bad template action {{{{{self.action}}}}}: {problem}")

    def unknown(self, problem: str = "") -> UsageError:
        """What is not known here, with what is (the fields, the functions)."""
        known = ", ".join([*(f".{name}" for name in self.fields), *sorted(self.functions)])
        problem = f": {problem}" if problem else ""
        return UsageError(
            f"unsupported template action {{{{{self.action}}}}}{problem} (supported: {known})"
        )

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def pipeline(self) -> Node:
        node = self.command(None)
        while (token := self.peek()) is not None and token == ("punct", "|"):
            self.at += 1
            node = self.command(node)
        return node

    def command(self, piped: Node | None) -> Node:
        first = self.operand(head=True)
        arguments: list[Node] = []
        while (token := self.peek()) is not None and token not in (("punct", "|"), ("punct", ")")):
            argument = self.operand(head=False)
            assert not isinstance(argument, str)  # operand calls a function not at the head
            arguments.append(argument)
        if isinstance(first, str):  # a function's name
            return self.call(first, arguments, piped)
        if arguments or piped is not None:
            raise self.bad("only a function takes arguments")
        return first

    def call(self, name: str, arguments: list[Node], piped: Node | None) -> Node:
        function = self.functions[name]
        nodes = [*arguments, *([piped] if piped is not None else [])]  # a pipe's value: last
        try:  # the arity now, as Go checks it when the template is parsed
            _check_arity(function, len(nodes))
        except TypeError:
            raise self.bad(f"wrong number of arguments for {name}") from None

        def node(data: Mapping[str, str]) -> Value:
            try:
                return function(*(argument(data) for argument in nodes))
            except UsageError:
                raise
            except (ValueError, TypeError, ZeroDivisionError, OverflowError) as error:
                raise self.bad(f"{name}: {error}") from None

        return node

    def operand(self, head: bool) -> Node | str:
        token = self.peek()
        if token is None:
            raise self.bad("missing value")
        self.at += 1
        kind, text = token
        if kind == "field":
            if text[1:] not in self.fields:
                raise self.unknown()
            self.uses_fields = True
            return _field(text[1:])
        if kind == "string":
            value = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text[1:-1])
            return _constant(value)
        if kind == "raw":
            return _constant(text[1:-1])
        if kind == "number":
            return _constant(float(text) if any(c in text for c in ".eE") else int(text))
        if kind == "name":
            if text in ("true", "false"):
                return _constant(text == "true")
            if text in _CONTROL:
                raise self.bad(f"{text}: Go template control actions are not supported")
            if text not in self.functions:
                raise self.unknown(f'function "{text}" not defined')
            if head:
                return text
            return self.call(text, [], None)  # a function as an argument: called bare
        if (kind, text) == ("punct", "("):
            inner = self.pipeline()
            if self.peek() != ("punct", ")"):
                raise self.bad("unclosed (")
            self.at += 1
            return inner
        raise self.bad(f"unexpected {text!r}")


def _constant(value: Value) -> Node:
    return lambda data: value


def _field(name: str) -> Node:
    return lambda data: data[name]


def _check_arity(function: Callable[..., Value], count: int) -> None:
    import inspect

    inspect.signature(function).bind(*range(count))


def compile_expression(
    action: str, functions: Mapping[str, Callable[..., Value]], fields: Collection[str]
) -> Node:
    """One action's text (between ``{{`` and ``}}``) as a function of the call's data
    (``fields``: the names it may use). An action of constants alone is tried once
    now, so ``randomInt 5 5`` fails before the run rather than at its first call."""
    if action.startswith("/*"):
        return lambda data: ""  # a comment prints nothing
    if re.match(r"\$|[A-Za-z_]\w*\s*:=", action):
        raise UsageError(f"template action {{{{{action}}}}}: Go template variables are not"
                         " supported")  # fmt: skip
    parser = _Parser(action, functions, fields)
    node = parser.pipeline()
    left = parser.peek()
    if left is not None:
        raise parser.bad(f"unexpected {left[1]!r}")
    if not parser.uses_fields:
        node({})
    return node
