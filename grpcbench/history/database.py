"""Opening a results store by URL: SQLite embedded (no server), PostgreSQL for a team.

The schema is brought to the newest revision by Alembic on every open, so a store
written by an older grpcbench is upgraded in place. A password never comes from the
command line (where ``ps`` shows it): give it in ``GRPCBENCH_STORE`` or libpq's
``PGPASSWORD``. Every failure is one line with the URL's password masked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from grpcbench.base.errors import UsageError
from grpcbench.base.secrets import redact

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

STORE_ENV = "GRPCBENCH_STORE"  # the store's URL, when --store is not given
PROJECT_ENV = "GRPCBENCH_PROJECT"
EXTRA_HINT = "pip install 'grpcbench[history]'"
SCHEMES = ("sqlite:///", "postgresql://", "postgresql+psycopg://")
# The newest migration (migrations/versions): a store already there is opened without
# Alembic, which costs a reader 0.4 s of imports (a test keeps this equal to its head).
SCHEMA_REVISION = "0003"


def store_url(given: str | None, *, from_command_line: bool = True) -> str:
    """The store's URL: ``given`` (an option), else ``GRPCBENCH_STORE``; checked."""
    url = given or os.environ.get(STORE_ENV, "")
    if not url:
        raise UsageError(f"no results store: give --store URL or set {STORE_ENV}")
    if not url.startswith(SCHEMES):
        raise UsageError(
            f"bad store URL {redact(url)!r}: sqlite:///PATH or postgresql://USER@HOST/DB"
        )
    if given and from_command_line and _has_password(given):
        raise UsageError(
            "the store URL on the command line holds a password, which any process can"
            f" read there: set {STORE_ENV} or PGPASSWORD instead"
        )
    return url


def _has_password(url: str) -> bool:
    netloc = url.split("://", 1)[1].split("/", 1)[0]
    return "@" in netloc and ":" in netloc.rsplit("@", 1)[0]


def _engine_url(url: str) -> str:
    """SQLAlchemy's spelling: PostgreSQL through psycopg 3 (the database extra's)."""
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def create_engine_for(url: str) -> Engine:
    """An engine on the store, its schema upgraded to the newest revision."""
    try:
        import sqlalchemy
    except ImportError:
        raise UsageError(f"the results store needs SQLAlchemy and Alembic: {EXTRA_HINT}") from None
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :]
        if path and path != ":memory:" and not Path(path).parent.is_dir():
            raise UsageError(f"cannot open store {url}: {Path(path).parent} is not a directory")
    try:
        engine = sqlalchemy.create_engine(_engine_url(url), future=True)
        if _revision(engine) != SCHEMA_REVISION:
            _upgrade(engine)
    except ImportError as missing:  # psycopg for postgresql://
        raise UsageError(f"cannot open store: {missing.name} is missing: pip install"
                         " 'grpcbench[database]'") from None  # fmt: skip
    except sqlalchemy.exc.SQLAlchemyError as error:
        raise UsageError(f"cannot open store {redact(url)}: {_reason(error)}") from None
    return engine


def _reason(error: Exception) -> str:
    """A database error's first line (the driver's own, when it gives one), masked."""
    return redact(str(getattr(error, "orig", None) or error).strip().splitlines()[0])


def _revision(engine: Engine) -> str | None:
    """The store's schema revision, as Alembic recorded it (None: a new store)."""
    import sqlalchemy

    with engine.connect() as connection:
        if not sqlalchemy.inspect(connection).has_table("alembic_version"):
            return None
        found = connection.execute(sqlalchemy.text("SELECT version_num FROM alembic_version"))
        return found.scalar()


def _upgrade(engine: Engine) -> None:
    try:
        from alembic import command
        from alembic.config import Config
    except ImportError:
        raise UsageError(f"the results store needs Alembic: {EXTRA_HINT}") from None
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


@contextmanager
def transaction(engine: Engine) -> Iterator[Connection]:
    """A transaction whose database errors are one line, the URL's password masked."""
    import sqlalchemy

    try:
        with engine.begin() as connection:
            yield connection
    except sqlalchemy.exc.SQLAlchemyError as error:
        raise UsageError(f"the results store failed: {_reason(error)}") from None
