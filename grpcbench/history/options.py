"""``--store`` and ``--project`` on `run` and `capacity` (a group of ``RunArgs``), and
keeping a finished run in the store.

The store is opened (and its schema upgraded) before the first level, so a store
that cannot be reached is one line before anything is measured, not after; the run
is kept before its results files are written, so they carry the stored run's id.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grpcbench.base import panels
from grpcbench.base.declarations import option
from grpcbench.base.errors import UsageError
from grpcbench.base.secrets import redact
from grpcbench.history.database import PROJECT_ENV, STORE_ENV, store_url

if TYPE_CHECKING:
    from grpcbench.history.store import Store
    from grpcbench.model.results import RunRecord


@dataclass(frozen=True)
class StoreArgs:
    store: str | None = option(
        None,
        help=(
            "Keep the run in this results store: sqlite:///PATH or postgresql://USER@HOST/DB"
            " (a password only in GRPCBENCH_STORE or PGPASSWORD). Default: GRPCBENCH_STORE;"
            " see `grpcbench history` (pip install 'grpcbench[history]')."
        ),
        panel=panels.OUTPUT,
    )
    project: str | None = option(
        None,
        help="The store's project for this run. Default: GRPCBENCH_PROJECT.",
        panel=panels.OUTPUT,
    )


@dataclass(frozen=True)
class StoreTarget:
    """Where a run is to be kept: checked when the options are, opened when it starts."""

    url: str
    project: str

    @classmethod
    def of(cls, args: StoreArgs) -> StoreTarget | None:
        """None when no store is asked for (neither --store nor GRPCBENCH_STORE)."""
        from grpcbench.history.store import check_project

        if not args.store and not os.environ.get(STORE_ENV):
            if args.project:
                raise UsageError(f"--project names a project of a store: give --store URL"
                                 f" or set {STORE_ENV}")  # fmt: skip
            return None
        project = args.project or os.environ.get(PROJECT_ENV, "")
        if not project:
            raise UsageError(f"a store needs a project: give --project NAME or set {PROJECT_ENV}")
        return cls(store_url(args.store), check_project(project))

    def describe(self) -> str:
        return f"project {self.project} in {redact(self.url)}"


class RunKeeper:
    """Keeps one run in the store once it has ended."""

    def __init__(self, target: StoreTarget) -> None:
        from grpcbench.history.store import Store

        self.target = target
        self.store: Store = Store(target.url)  # opened now: an unreachable store is said first

    def keep(self, record: RunRecord) -> str:
        """Store ``record`` and note its id in it (its results files then carry it)."""
        from grpcbench.history.history import refresh

        saved = self.store.save(self.target.project, record.to_json(), "grpcbench run")
        refresh(self.store, self.target.project)
        record.stored = {"project": self.target.project, "run_id": saved.id,
                         "store": redact(self.target.url)}  # fmt: skip
        return f"stored as run {saved.id} of {self.target.describe()}"
