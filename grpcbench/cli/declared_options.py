"""`run`'s options for declared settings, generated from their declarations.

A setting declared in ``plan.LoadSettings`` (``settings.setting``) becomes a
`run` option with its name, short flag, help, shown default and panel, with no
edit here or in ``cli``: ``settings_options`` adds one Typer parameter per
declaration to the command's signature and hands the command what was typed as
one ``settings`` mapping (field name -> text), which ``options`` parses through
the same declarations. `run`'s other options are declared on ``run.arguments.RunArgs``
(``base.declarations.option``): ``arguments_options`` adds theirs and hands the
command one ``RunArgs``. Help is plain text: it is escaped here, so an extra's name
in brackets ("grpcbench[profile]") is not read as rich markup.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.markup import escape

from grpcbench.base.declarations import (
    DeclaredOption,
    build_declared,
    declared,
    declared_options,
    default_text,
    help_for,
)

PREFIX = "setting_"  # generated parameters' names, apart from the command's own


def _help(cls: type, name: str, declared_help: str | Callable[[], str]) -> str:
    """The declared help, with the default when the help does not say it."""
    text = help_for(cls, name)
    said = declared_help() if callable(declared_help) else declared_help
    return text if "{default}" in said else f"{text} Default: {default_text(cls, name)}."


def settings_options(cls: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a Typer command whose last parameter is ``settings: dict[str, str]``."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(command, include_extras=True)
        own = [
            p
            for p in inspect.signature(command, eval_str=True).parameters.values()
            if p.name != "settings"
        ]
        generated: list[inspect.Parameter] = []
        for name, (_, info) in declared(cls).items():
            if not info.cli:
                continue
            names = (info.option, info.short) if info.short else (info.option,)
            option = typer.Option(
                *names,
                help=escape(_help(cls, name, info.help)),
                show_default=False,
                metavar=None if info.flag else info.metavar,
                rich_help_panel=info.panel or None,
            )
            kind: Any = bool if info.flag else typing.Optional[str]  # noqa: UP045 - for Typer
            annotation = Annotated[kind, option]
            generated.append(
                inspect.Parameter(
                    PREFIX + name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=False if info.flag else None,
                    annotation=annotation,
                )  # fmt: skip
            )
            hints[PREFIX + name] = annotation
        hints.pop("settings", None)

        @functools.wraps(command)
        def with_settings(*args: Any, **kwargs: Any) -> Any:
            typed = {key: kwargs.pop(key) for key in list(kwargs) if key.startswith(PREFIX)}
            settings = {  # a flag that is off, or an option not given, is left out
                key[len(PREFIX) :]: "true" if text is True else text
                for key, text in typed.items()
                if text is not None and text is not False
            }
            return command(*args, settings=settings, **kwargs)

        with_settings.__signature__ = inspect.Signature(own + generated)  # type: ignore[attr-defined]
        with_settings.__annotations__ = hints
        return with_settings

    return decorate


def arguments_options(
    cls: type, exclude: tuple[str, ...] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a Typer command with a parameter ``args: cls``: it gets one option per
    option declared on ``cls`` and its groups (``base.declarations.option``) but
    ``exclude``, and receives what was typed as one ``cls`` (the excluded at their
    defaults). `run` and `capacity` take `run`'s options this way, so the two cannot
    drift apart and a new option is one declaration."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(command, include_extras=True)
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "args"]
        taken = {p.name for p in own}
        options = [
            o for o in declared_options(cls) if o.name not in exclude and o.name not in taken
        ]
        generated = [_parameter(o) for o in options]
        names = [o.name for o in options]

        @functools.wraps(command)
        def with_arguments(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in names}
            return command(*args, args=build_declared(cls, given), **kwargs)

        hints.pop("args", None)
        hints.update({p.name: p.annotation for p in generated})
        keyword = [p for p in own if p.kind is inspect.Parameter.KEYWORD_ONLY]
        positional = [p for p in own if p.kind is not inspect.Parameter.KEYWORD_ONLY]
        with_arguments.__signature__ = inspect.Signature([*positional, *generated, *keyword])  # type: ignore[attr-defined]
        with_arguments.__annotations__ = hints
        return with_arguments

    return decorate


def _parameter(option: DeclaredOption) -> inspect.Parameter:
    """A declared option as the keyword-only Typer parameter that takes it."""
    names = option.names
    hint: Any = option.hint
    default = option.default
    if option.repeatable:  # repeated on the command line: a list, None when not given
        hint, default = typing.Optional[list[str]], None  # noqa: UP045 - for Typer
    elif hint is bool and default is True and "/" not in names[0]:
        names = (f"{names[0]}/--no-{names[0].removeprefix('--')}", *names[1:])
    info = option.info
    declared = typer.Option(
        *names,
        help=escape(info.help_text),
        rich_help_panel=info.panel or None,
        metavar=info.metavar,
    )
    return inspect.Parameter(
        option.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[hint, declared],
    )
