"""Registry entries from installed plugins: Python entry points, one group per registry.

Every registry (load drivers, server kinds, client stacks, exporters) is a dict of
frozen ``*Info`` declarations: the built-in ones, then those a plugin package
declares in its ``pyproject.toml``, e.g.::

    [project.entry-points."grpcbench.server_kinds"]
    grpcio-gzip = "mypkg.kinds:GZIP"   # a ServerKindInfo (or a tuple of them)

Entry points, not a registration call, because a server kind is looked up again in
the server's own subprocess and a driver's factory on a Dask worker: every process
finds the same entries without being told. A plugin that cannot be loaded is said
in one line on standard error and left out, so one broken package does not stop
every command.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from importlib.metadata import EntryPoints

Info = TypeVar("Info")


def installed_entry_points(group: str) -> EntryPoints:
    """The installed packages' entry points in ``group``, from one read per process:
    each read walks every distribution's metadata (about 10 ms here), and a command
    reads five groups."""
    return cast("EntryPoints", _every_entry_point().select(group=group))


@functools.cache
def _every_entry_point() -> Any:  # by group on Python 3.11, one EntryPoints later: both select
    from importlib.metadata import entry_points  # on the first read: not every command reads one

    return entry_points()


def _entries(group: str, info_class: type) -> Iterable[Any]:
    for entry in installed_entry_points(group):
        try:
            loaded = entry.load()
        except Exception as error:  # noqa: BLE001 - any plugin's failure is one line
            sys.stderr.write(f"grpcbench: plugin {entry.value} ({group}) not loaded: {error}\n")
            continue
        for info in loaded if isinstance(loaded, tuple) else (loaded,):
            if not isinstance(info, info_class):
                sys.stderr.write(
                    f"grpcbench: plugin {entry.value} ({group}) is not a {info_class.__name__};"
                    " left out\n"
                )
                continue
            yield info


class Registry(MutableMapping[str, Info]):
    """Entries by name: the built-in ones, then the plugins', loaded on first use.

    First use, not import: a plugin imports the registry's module for its ``*Info``
    class, so loading plugins while that module is still being imported would find
    it half made. A plugin may not replace a built-in entry: its name is refused in
    one line. Tests may set and delete entries as in a dict."""

    def __init__(self, group: str, info_class: type[Info], built_in: Iterable[Info]) -> None:
        self.group = group
        self.info_class = info_class
        self._entries: dict[str, Info] = {info.name: info for info in built_in}  # type: ignore[attr-defined]
        self._loaded = False

    def _all(self) -> dict[str, Info]:
        if not self._loaded:
            self._loaded = True
            for info in _entries(self.group, self.info_class):
                name = info.name
                if name in self._entries:
                    sys.stderr.write(
                        f"grpcbench: plugin entry {name!r} ({self.group}) exists already\n"
                    )
                    continue
                self._entries[name] = info
        return self._entries

    def __getitem__(self, name: str) -> Info:
        if not self._loaded:  # a built-in is final (no plugin may replace it): found
            found = self._entries.get(name)  # without reading every package's metadata
            if found is not None:
                return found
        return self._all()[name]

    def __setitem__(self, name: str, info: Info) -> None:
        self._all()[name] = info

    def __delitem__(self, name: str) -> None:
        del self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
