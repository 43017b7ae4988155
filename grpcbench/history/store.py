"""The results store: runs kept with their provenance, and their figures by series.

``save`` takes a results file's JSON (a run just finished, an imported file, an
upload): it must read as results (any format grpcbench wrote, upgraded), must hold no
unmasked credential, and is kept once per project (by its digest). Its figures go
into ``figures``, so ``figure_history`` is one indexed query however many runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from grpcbench.base.errors import OneLineError, UsageError
from grpcbench.base.secrets import MASK, redact
from grpcbench.history.database import create_engine_for, transaction
from grpcbench.history.series import level_figures
from grpcbench.history.times import utc_text
from grpcbench.model.results import RunRecord
from grpcbench.model.results_format import upgrade

# Keys whose values are credentials wherever they appear (gRPC metadata, params).
CREDENTIAL_KEYS = frozenset(
    ("authorization", "password", "passwd", "token", "api-key", "x-api-key", "api_key",
     "secret", "cookie", "proxy-authorization")
)  # fmt: skip
# What grpcbench adds to a results file once stored; not part of what was measured.
STORED_KEY = "stored"


@dataclass(frozen=True)
class StoredRun:
    id: int
    started_at: str
    kind: str
    status: str
    commit: str | None
    branch: str | None
    dirty: bool | None
    host: str | None


@dataclass(frozen=True)
class Saved:
    id: int
    new: bool  # False: the same results were already in the project


def unmasked_credentials(value: Any, where: str = "") -> Iterator[str]:
    """Where ``value`` holds a credential in the clear: a URI's password, or a
    credential-named key whose value is not masked."""
    if isinstance(value, str):
        if redact(value) != value:
            yield where or "a text"
    elif isinstance(value, dict):
        for key, item in value.items():
            named = isinstance(key, str) and key.lower() in CREDENTIAL_KEYS
            if named and item not in (MASK, None, "") and not isinstance(item, dict | list):
                yield f"{where}.{key}".lstrip(".")
            else:
                yield from unmasked_credentials(item, f"{where}.{key}".lstrip("."))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from unmasked_credentials(item, f"{where}[{index}]")


def parse_results(data: Any) -> RunRecord:
    """``data`` as a run, or one line saying why it is not results grpcbench wrote."""
    if not isinstance(data, dict):
        raise UsageError(f"not a results file: a JSON {type(data).__name__}, not an object")
    if data.get("tool", "grpcbench") != "grpcbench":  # the oldest formats did not say
        raise UsageError(f"not a results file of grpcbench: tool {data.get('tool')!r}")
    leaked = next(unmasked_credentials(data), None)
    if leaked is not None:
        raise UsageError(f"refused: the results hold a credential in the clear at {leaked}")
    try:
        record = RunRecord.from_json(upgrade(_measured(data)))
        utc_text(record.started_at)
        return record
    except OneLineError as error:
        raise UsageError(f"not a results file: {error}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        reason = f"missing {error}" if isinstance(error, KeyError) else str(error)
        raise UsageError(f"not a results file: {reason}") from None


def _measured(data: dict[str, Any]) -> dict[str, Any]:
    """The results as measured: without what storing them added (``STORED_KEY``)."""
    return {key: value for key, value in data.items() if key != STORED_KEY}


def digest_of(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(_measured(data), sort_keys=True).encode()).hexdigest()


class Store:
    """One results store (``history.database`` opens it and upgrades its schema)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = create_engine_for(url)

    def _project_id(self, connection: Any, name: str, create: bool) -> int | None:
        from sqlalchemy import insert, select

        from grpcbench.history.schema import projects

        found = connection.execute(select(projects.c.id).where(projects.c.name == name)).first()
        if found is not None:
            return int(found[0])
        if not create:
            return None
        created = connection.execute(insert(projects).values(name=name, created_at=_now()))
        return int(created.inserted_primary_key[0])

    def save(
        self, project: str, data: dict[str, Any], source: str, record: RunRecord | None = None
    ) -> Saved:
        """Keep a run (``data``: its results JSON; ``record``: it parsed, when the caller
        checked it already) in ``project``; the same results twice are kept once."""
        from sqlalchemy import insert, select

        from grpcbench.history.schema import figures, runs

        check_project(project)
        record = record if record is not None else parse_results(data)
        digest = digest_of(data)
        meta = record.metadata
        git: dict[str, Any] = meta["git"] if isinstance(meta.get("git"), dict) else {}
        with transaction(self.engine) as connection:
            project_id = self._project_id(connection, project, create=True)
            same = connection.execute(
                select(runs.c.id).where(runs.c.project_id == project_id, runs.c.digest == digest)
            ).first()
            if same is not None:
                return Saved(int(same[0]), new=False)
            row = connection.execute(insert(runs).values(
                project_id=project_id, started_at=utc_text(record.started_at), stored_at=_now(),
                kind="capacity" if record.capacity is not None else "run",
                status=record.status, git_commit=_text(git.get("commit")),
                git_branch=_text(git.get("branch")), git_dirty=_flag(git.get("dirty")),
                host=_text(meta.get("hostname")), cpus=_int(meta.get("cpu_count")),
                python=_text(meta.get("python")), grpcbench=_text(meta.get("grpcbench")),
                packages=json.dumps(meta.get("packages") or {}),
                format_version=int(data["format_version"]), digest=digest,
                source=source[-255:], results=json.dumps(data),
            ))  # fmt: skip
            run_id = int(row.inserted_primary_key[0])  # type: ignore[index]
            values = [
                {"run_id": run_id, "series": f.series, "figure": f.figure, "value": f.value,
                 "spread": f.spread, "verdict": f.verdict}
                for f in level_figures(record)
            ]  # fmt: skip
            if values:
                connection.execute(insert(figures), values)
        return Saved(run_id, new=True)

    def projects(self) -> list[tuple[str, int, str | None]]:
        """(name, runs, newest run's start) of every project."""
        from sqlalchemy import func, select

        from grpcbench.history.schema import projects, runs

        query = (
            select(projects.c.name, func.count(runs.c.id), func.max(runs.c.started_at))
            .select_from(projects.outerjoin(runs, runs.c.project_id == projects.c.id))
            .group_by(projects.c.name)
            .order_by(projects.c.name)
        )
        with transaction(self.engine) as connection:
            return [(str(n), int(c), s) for n, c, s in connection.execute(query)]

    def runs(self, project: str) -> list[StoredRun]:
        """The project's complete runs, oldest first (by when each run started: the store
        keeps each start in UTC, ``times.utc_text``, so its text sorts as its instant)."""
        from sqlalchemy import select

        from grpcbench.history.schema import runs

        with transaction(self.engine) as connection:
            project_id = self._project_id(connection, project, create=False)
            if project_id is None:
                raise UsageError(f"no project {project!r} in the store")
            rows = connection.execute(
                select(runs.c.id, runs.c.started_at, runs.c.kind, runs.c.status,
                       runs.c.git_commit, runs.c.git_branch, runs.c.git_dirty, runs.c.host)
                .where(runs.c.project_id == project_id, runs.c.status == "complete")
                .order_by(runs.c.started_at, runs.c.id)
            ).all()  # fmt: skip
        return [StoredRun(int(r[0]), *r[1:]) for r in rows]

    def figure_values(
        self, project: str, run_ids: list[int], figure: str
    ) -> dict[str, dict[int, tuple[float, float, str]]]:
        """series -> run id -> (value, spread, verdict) of ``figure``, for those of the
        project's runs in ``run_ids``."""
        from sqlalchemy import select

        from grpcbench.history.schema import figures, projects, runs

        found: dict[str, dict[int, tuple[float, float, str]]] = {}
        wanted = set(run_ids)
        query = (
            select(figures.c.run_id, figures.c.series, figures.c.value, figures.c.spread,
                   figures.c.verdict)
            .join(runs, runs.c.id == figures.c.run_id)
            .join(projects, projects.c.id == runs.c.project_id)
            .where(figures.c.figure == figure, projects.c.name == project)
        )  # fmt: skip
        with transaction(self.engine) as connection:
            for run_id, series, value, spread, verdict in connection.execute(query):
                if run_id in wanted:
                    found.setdefault(series, {})[run_id] = (value, spread, verdict)
        return found

    def analysis(self, project: str, figure: str, settings: str) -> tuple[int, str] | None:
        """(newest run id, change points as JSON) of the last analysis kept, if any."""
        from sqlalchemy import select

        from grpcbench.history.schema import analyses, projects

        query = (
            select(analyses.c.newest_run_id, analyses.c.change_points)
            .join(projects, projects.c.id == analyses.c.project_id)
            .where(projects.c.name == project, analyses.c.figure == figure,
                   analyses.c.settings == settings)
        )  # fmt: skip
        with transaction(self.engine) as connection:
            row = connection.execute(query).first()
        return (int(row[0]), str(row[1])) if row else None

    def keep_analysis(
        self, project: str, figure: str, settings: str, newest_run_id: int, found: str
    ) -> None:
        from sqlalchemy import delete, insert

        from grpcbench.history.schema import analyses

        with transaction(self.engine) as connection:
            project_id = self._project_id(connection, project, create=False)
            if project_id is None:
                return
            connection.execute(delete(analyses).where(
                analyses.c.project_id == project_id, analyses.c.figure == figure,
                analyses.c.settings == settings))  # fmt: skip
            connection.execute(insert(analyses).values(
                project_id=project_id, figure=figure, settings=settings,
                newest_run_id=newest_run_id, change_points=found))  # fmt: skip

    def results(self, run_id: int) -> dict[str, Any]:
        from sqlalchemy import select

        from grpcbench.history.schema import runs

        with transaction(self.engine) as connection:
            row = connection.execute(select(runs.c.results).where(runs.c.id == run_id)).first()
        if row is None:
            raise UsageError(f"no run {run_id} in the store")
        loaded: dict[str, Any] = json.loads(row[0])
        return loaded


def check_project(name: str) -> str:
    if not name or len(name) > 200 or not name.isprintable():
        raise UsageError(f"bad project name {name!r}: 1 to 200 printable characters")
    return name


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _text(value: Any) -> str | None:
    return str(value)[:255] if isinstance(value, str) and value else None


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
