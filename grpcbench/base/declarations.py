"""Settings declared once: each field of a settings dataclass carries its option, help,
JSON name, how it reads back from older results files, and its check.

ghz's ``runner.Config`` and grpclib's ``Configuration`` are the models: one
declaration per setting, from which the CLI's help (``help_for``), the results
file (``to_json``/``from_json``) and validation (``check``, run by the
dataclass's ``__post_init__``, so the CLI, the pytest plugin and the
benchmarks are held to the same rules) all come. ``plan.LoadSettings`` uses it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpcbench.base.errors import UsageError

_UNSET: Any = object()


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class SettingInfo:
    option: str  # the `run` option, e.g. "--client-stack"
    # Its help text ("{default}" is replaced by the default's text); a function when a
    # registry writes it (--client-stack lists the stacks there are).
    help: str | Callable[[], str]
    json: str  # its key in a results file
    dump: Callable[[Any], Any] = _same  # value -> JSON
    load: Callable[[Any], Any] = _same  # JSON -> value
    # What a results file written before this setting existed meant; unset: the default.
    before: Any = _UNSET
    check: Callable[[Any], str | None] | None = None  # the problem with a value, or None
    default_text: str = ""  # how the default reads in help, when not str(default)
    # The command line: `run` gets one option per setting with cli=True (cli_options),
    # whose text ``parse`` reads (None: ``load``); an option that fills several
    # fields (--warmup: a count or a time) parses into a tuple of the fields in ``sets``.
    parse: Callable[[str], Any] | None = None
    sets: tuple[str, ...] = ()
    cli: bool = True  # False: another option gives it (--client-cpus is placement's)
    short: str = ""  # e.g. "-n"
    panel: str = ""  # the `run --help` panel
    metavar: str = "TEXT"  # what the option takes, in help
    flag: bool = False  # an on/off option that takes no value (ghz's -e)


def setting(
    default: Any = _UNSET, *, default_factory: Callable[[], Any] | None = None, **info: Any
) -> Any:
    """A dataclass field with its declaration (see ``SettingInfo``)."""
    metadata = {"setting": SettingInfo(**info)}
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def declared(cls: type) -> dict[str, tuple[dataclasses.Field[Any], SettingInfo]]:
    """Every declared setting of a dataclass, by attribute name."""
    return {
        f.name: (f, f.metadata["setting"])
        for f in dataclasses.fields(cls)
        if "setting" in f.metadata
    }


def _default(spec: dataclasses.Field[Any]) -> Any:
    if spec.default is not dataclasses.MISSING:
        return spec.default
    assert spec.default_factory is not dataclasses.MISSING
    return spec.default_factory()


def default_text(cls: type, name: str) -> str:
    spec, info = declared(cls)[name]
    return info.default_text or str(_default(spec))


def help_for(cls: type, name: str) -> str:
    declared_help = declared(cls)[name][1].help
    text = declared_help() if callable(declared_help) else declared_help
    return text.replace("{default}", default_text(cls, name))


def keywords(cls: type) -> dict[str, str]:
    """Every name a setting goes by outside the command line -> its field: the field
    (``timeout_s``) and its option's (``timeout``)."""
    names: dict[str, str] = {}
    for name, (_, info) in declared(cls).items():
        names[name] = name
        if info.cli:
            names.setdefault(info.option.lstrip("-").replace("-", "_"), name)
    return names


def parse_values(cls: type, given: Mapping[str, Any]) -> dict[str, Any]:
    """Field values from what a user gave, by field or option name: text (the command
    line, a scenario file) is parsed as the option's, anything else loaded as from
    JSON; checks run when the dataclass is made. An unknown name is one clear error."""
    known = keywords(cls)
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise UsageError(
            f"unknown option(s) {', '.join(unknown)} (the settings: {', '.join(sorted(known))})"
        )
    specs = declared(cls)
    values: dict[str, Any] = {}
    for keyword, value in given.items():
        name = known[keyword]
        info = specs[name][1]
        if not isinstance(value, str) or info.parse is None:
            values[name] = info.load(value)
        elif info.sets:
            values.update(zip(info.sets, info.parse(value), strict=True))
        else:
            values[name] = info.parse(value)
    for _, info in specs.values():  # --warmup 0 or 2s: its other field is 0, not the default
        if info.sets and any(member in values for member in info.sets):
            for member in info.sets:
                values.setdefault(member, type(_default(specs[member][0]))())
    return values


def to_json(settings: Any) -> dict[str, Any]:
    return {
        info.json: info.dump(getattr(settings, name))
        for name, (_, info) in declared(type(settings)).items()
    }


def from_json(cls: type, data: Mapping[str, Any]) -> Any:
    """From a results file of any age: a setting it lacks gets what it meant then."""
    values = {}
    for name, (spec, info) in declared(cls).items():
        if info.json in data:
            values[name] = info.load(data[info.json])
        elif info.before is not _UNSET:
            values[name] = info.before
        else:
            values[name] = _default(spec)
    return cls(**values)


def check(settings: Any) -> None:
    """Every declared check; the first failure is one ``UsageError`` naming the option."""
    for name, (_, info) in declared(type(settings)).items():
        if info.check is None:
            continue
        value = getattr(settings, name)
        problem = info.check(value)
        if problem:
            raise UsageError(f"bad {info.option} {value!r}: {problem}")


def at_least(minimum: float, strict: bool = False) -> Callable[[Any], str | None]:
    def check_value(value: Any) -> str | None:
        if value < minimum or (strict and value == minimum):
            return f"must be {'more than' if strict else 'at least'} {minimum:g}"
        return None

    return check_value


def one_of(*choices: str) -> Callable[[Any], str | None]:
    return lambda value: None if value in choices else " or ".join(choices)


# Command-line options of a run that are not load settings: declared once on the
# dataclass field that holds them (``run.arguments.RunArgs`` and the groups it holds),
# so `run`'s and `capacity`'s parameters, the pytest plugin's keywords and the
# masking of secrets on a saved command line all come from one declaration.


@dataclass(frozen=True)
class OptionInfo:
    names: tuple[str, ...]  # ("--output", "-o"), or ("--pin/--no-pin",); () = from the field
    # Its help; a function when a registry writes it (--load lists the drivers there are).
    help: str | Callable[[], str]
    panel: str = ""  # the `run --help` panel
    # Its value can carry a credential (request metadata, a key, a URI with a password):
    # masked on the saved command line and wherever it is shown.
    secret: bool = False
    metavar: str | None = None
    # How its text becomes a value, given (text, the option's name), raising UsageError;
    # None: the value is used as typed. A repeatable option's items parse one by one.
    parse: Callable[[str, str], Any] | None = None
    # The problem with a (parsed) value, or None: "bad --repeat 0: {problem}".
    check: Callable[[Any], str | None] | None = None
    # Its value names a file the run reads: no output of the run may be written over it.
    reads: bool = False

    @property
    def help_text(self) -> str:
        return self.help() if callable(self.help) else self.help


def option(
    default: Any = _UNSET,
    *names: str,
    help: str | Callable[[], str],  # noqa: A002 - the option's help, as Typer names it
    panel: str = "",
    secret: bool = False,
    metavar: str | None = None,
    parse: Callable[[str, str], Any] | None = None,
    check: Callable[[Any], str | None] | None = None,
    reads: bool = False,
) -> Any:
    """A dataclass field that is a command-line option (see ``OptionInfo``)."""
    info = OptionInfo(names, help, panel, secret, metavar, parse, check, reads)
    return field(default=default, metadata={"option": info})


class DeclaredArgs:
    """A mixin for a dataclass of options: ``value(name)`` is an option's value, parsed
    and checked by its declaration (``option(parse=, check=)``), so what one option
    means is said once, beside it, and every reader gets the same typed value. The
    fields themselves keep what was typed, for rewriters of a command line (ghz's
    flags) that work on text."""

    def value(self, name: str) -> Any:
        spec = next(f for f in dataclasses.fields(self) if f.name == name)  # type: ignore[arg-type]
        info: OptionInfo = spec.metadata["option"]
        shown = (info.names or ("--" + name.replace("_", "-"),))[0].split("/")[0]
        raw = getattr(self, name)
        if raw is None:
            return None
        value = raw
        if info.parse is not None:
            if isinstance(raw, tuple):
                value = tuple(info.parse(item, shown) for item in raw)
            elif isinstance(raw, str):
                value = info.parse(raw, shown)
        if info.check is not None:
            problem = info.check(value)
            if problem:
                raise UsageError(f"bad {shown} {_as_typed(raw)}: {problem}")
        return value


def _as_typed(value: Any) -> str:
    """A value as a user typed it, for an error line."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def group(cls: type) -> Any:
    """A dataclass field holding another dataclass of options (the call's, TLS's)."""
    return field(default_factory=cls, metadata={"options": cls})


@dataclass(frozen=True)
class DeclaredOption:
    """One option found by ``declared_options``: where it sits and what it says."""

    path: tuple[str, ...]  # field names from the outer dataclass down to it
    info: OptionInfo
    hint: Any  # the field's resolved type
    default: Any

    @property
    def name(self) -> str:
        """Its keyword: the field's name, unique among a command's options."""
        return self.path[-1]

    @property
    def names(self) -> tuple[str, ...]:
        return self.info.names or ("--" + self.name.replace("_", "-"),)

    @property
    def repeatable(self) -> bool:
        return getattr(self.hint, "__origin__", None) is tuple


def declared_options(cls: type, _path: tuple[str, ...] = ()) -> list[DeclaredOption]:
    """Every option of ``cls`` and of the groups it holds, in declaration order."""
    import typing

    hints = typing.get_type_hints(cls)
    found: list[DeclaredOption] = []
    for spec in dataclasses.fields(cls):
        if "options" in spec.metadata:
            found += declared_options(spec.metadata["options"], (*_path, spec.name))
        elif "option" in spec.metadata:
            default = _default(spec)
            found.append(DeclaredOption((*_path, spec.name), spec.metadata["option"],
                                        hints[spec.name], default))  # fmt: skip
    names = [option.name for option in found]
    assert len(names) == len(set(names)), f"{cls.__name__}: two options named alike"
    return found


def build_declared(cls: type, given: Mapping[str, Any]) -> Any:
    """``cls`` made from options by keyword (``declared_options``'s names), each group
    made from its own; a list given for a repeatable option becomes a tuple, and an
    unknown keyword is one clear error."""
    options = {option.name: option for option in declared_options(cls)}
    unknown = sorted(set(given) - set(options))
    if unknown:
        raise UsageError(f"unknown option(s) {', '.join(unknown)}")
    nested: dict[tuple[str, ...], dict[str, Any]] = {(): {}}
    for name, value in given.items():
        option = options[name]
        if option.repeatable:
            value = () if value is None else tuple(value)
        nested.setdefault(option.path[:-1], {})[name] = value
    return _made(cls, (), nested)


def _made(cls: type, path: tuple[str, ...], nested: dict[tuple[str, ...], dict[str, Any]]) -> Any:
    values = dict(nested.get(path, {}))
    for spec in dataclasses.fields(cls):
        if "options" in spec.metadata:
            values[spec.name] = _made(spec.metadata["options"], (*path, spec.name), nested)
    return cls(**values)


def read_files(options: Any) -> list[tuple[str, Path]]:
    """Every file the options name that the run reads (``option(reads=True)``), as
    (its option, its path), from the object and the groups it holds."""
    found = []
    for declared_one in declared_options(type(options)):
        if not declared_one.info.reads:
            continue
        value: Any = options
        for name in declared_one.path:
            value = getattr(value, name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, str | Path) and str(item).strip() not in ("", "-"):
                found.append((declared_one.names[0].split("/")[0], Path(str(item).strip())))
    return found


def secret_option_names(cls: type) -> frozenset[str]:
    """Every spelling of every option declared secret (for masking a command line)."""
    return frozenset(
        name.split("/")[0]
        for option in declared_options(cls)
        if option.info.secret
        for name in option.names
    )
