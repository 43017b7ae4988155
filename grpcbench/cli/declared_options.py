"""`run`'s options for declared settings, generated from their declarations.

A setting declared in ``plan.LoadSettings`` (``settings.setting``) becomes a
`run` option with its name, short flag, help, shown default and panel, with no
edit here or in ``cli``: ``settings_options`` adds one Typer parameter per
declaration to the command's signature and hands the command what was typed as
one ``settings`` mapping (field name -> text), which ``options`` parses through
the same declarations.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any

import typer

from grpcbench.base.declarations import declared, default_text, help_for

PREFIX = "setting_"  # generated parameters' names, apart from the command's own


def _help(cls: type, name: str, declared_help: str) -> str:
    """The declared help, with the default when the help does not say it."""
    text = help_for(cls, name)
    return text if "{default}" in declared_help else f"{text} Default: {default_text(cls, name)}."


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
                help=_help(cls, name, info.help),
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


def borrow_parameters(
    source: Callable[..., Any], exclude: tuple[str, ...] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command every option of ``source`` (another command, undecorated) but
    ``exclude`` and those it declares itself; the command receives them as one
    ``borrowed`` mapping (parameter name -> value), its own by name. `capacity`
    takes `run`'s options this way, so the two cannot drift apart.

    Stack it under ``settings_options``: the command's last parameter stays ``settings``."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(command, include_extras=True)
        source_hints = typing.get_type_hints(source, include_extras=True)
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name not in ("borrowed", "settings")]
        taken = {p.name for p in own} | set(exclude) | {"settings"}
        borrowed = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=source_hints[p.name])
            for p in inspect.signature(source, eval_str=True).parameters.values()
            if p.name not in taken
        ]
        settings = signature.parameters["settings"].replace(kind=inspect.Parameter.KEYWORD_ONLY)
        names = [p.name for p in borrowed]

        @functools.wraps(command)
        def with_borrowed(**kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in names}
            return command(borrowed=given, **kwargs)

        parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
        with_borrowed.__signature__ = inspect.Signature([*parameters, *borrowed, settings])  # type: ignore[attr-defined]
        hints.pop("borrowed", None)
        with_borrowed.__annotations__ = {
            **{p.name: source_hints[p.name] for p in borrowed}, **hints
        }  # fmt: skip
        return with_borrowed

    return decorate
