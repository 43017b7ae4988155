"""Where seed 000's users are queried from: SQLite, PostgreSQL or MySQL, sync or async.

The queries are the seed's (placeholders instead of its string interpolation):
``SELECT * FROM users WHERE name LIKE '%kw%' ORDER BY id DESC LIMIT n OFFSET m``
and ``SELECT COUNT(1) AS count FROM users WHERE name LIKE '%kw%'``.

Sync grpcio runs each query in a thread with a connection of that thread's own
(sqlite3, psycopg and PyMySQL connections are not shared between threads);
grpclib and grpc.aio await them on an async driver's pool (asyncpg, aiomysql),
or, for SQLite, which has no async driver, in a thread pool.

``db_delay_ms`` adds a wait before every query, off the CPU: a network round
trip to a database further away than loopback.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from grpcbench.backing.mysql import mysql_settings

Row = Sequence[Any]  # id, name, email, created_at

# Page queries in flight per server process: threads (sync) or pooled connections.
QUERY_CONNECTIONS = 100


def count_sql(mark: str) -> str:
    return f"SELECT COUNT(1) AS count FROM users WHERE name LIKE {mark}"


def page_sql(marks: tuple[str, str, str]) -> str:
    like, limit, offset = marks
    return (
        f"SELECT * FROM users WHERE name LIKE {like} ORDER BY id DESC LIMIT {limit} OFFSET {offset}"
    )


class SyncStore(Protocol):
    def count(self, keyword: str) -> int: ...

    def page(self, keyword: str, limit: int, offset: int) -> list[Row]: ...


class AsyncStore(Protocol):
    async def count(self, keyword: str) -> int: ...

    async def page(self, keyword: str, limit: int, offset: int) -> list[Row]: ...


class _PerThread:
    """A connection per thread, made on the thread's first query."""

    mark = "%s"

    def __init__(self, delay_s: float) -> None:
        self.local = threading.local()
        self.delay_s = delay_s
        self._count_sql = count_sql(self.mark)
        self._page_sql = page_sql((self.mark, self.mark, self.mark))

    def connect(self) -> Any:
        raise NotImplementedError

    def _db(self) -> Any:
        db = getattr(self.local, "db", None)
        if db is None:
            db = self.local.db = self.connect()
        return db

    def _execute(self, sql: str, args: tuple[Any, ...]) -> list[Row]:
        cursor = self._db().cursor()
        try:
            cursor.execute(sql, args)
            return list(cursor.fetchall())
        finally:
            cursor.close()

    def count(self, keyword: str) -> int:
        if self.delay_s:
            time.sleep(self.delay_s)
        return int(self._execute(self._count_sql, (f"%{keyword}%",))[0][0])

    def page(self, keyword: str, limit: int, offset: int) -> list[Row]:
        if self.delay_s:
            time.sleep(self.delay_s)
        return self._execute(self._page_sql, (f"%{keyword}%", limit, offset))


class SqliteStore(_PerThread):
    """Read-only SQLite, the no-extra fallback: queries run on the server's own CPU."""

    mark = "?"

    def __init__(self, path: str, delay_s: float = 0.0) -> None:
        super().__init__(delay_s)
        self.uri = f"file:{path}?mode=ro"

    def connect(self) -> Any:
        return sqlite3.connect(self.uri, uri=True, check_same_thread=False)


class PsycopgStore(_PerThread):
    """PostgreSQL from sync grpcio's threads (psycopg 3; prepared after 5 uses)."""

    def __init__(self, uri: str, delay_s: float = 0.0) -> None:
        super().__init__(delay_s)
        self.uri = uri

    def connect(self) -> Any:
        import psycopg

        return psycopg.connect(self.uri, autocommit=True)


class PyMysqlStore(_PerThread):
    """MySQL from sync grpcio's threads (PyMySQL: pure Python, what aiomysql is built on)."""

    def __init__(self, uri: str, delay_s: float = 0.0) -> None:
        super().__init__(delay_s)
        self.settings = mysql_settings(uri)

    def connect(self) -> Any:
        import pymysql

        return pymysql.connect(autocommit=True, **self.settings)


class ThreadedStore:
    """A sync store awaited from an async server: each query in a thread of a shared pool."""

    def __init__(self, store: SyncStore) -> None:
        self.store = store
        self.pool = ThreadPoolExecutor(QUERY_CONNECTIONS, thread_name_prefix="page")

    async def count(self, keyword: str) -> int:
        return await asyncio.get_running_loop().run_in_executor(
            self.pool, self.store.count, keyword
        )

    async def page(self, keyword: str, limit: int, offset: int) -> list[Row]:
        return await asyncio.get_running_loop().run_in_executor(
            self.pool, self.store.page, keyword, limit, offset
        )


class _Pooled:
    """An async driver's pool, created in the server's loop on the first query."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self._pool: Any = None
        self._creating: asyncio.Future[Any] | None = None

    async def create_pool(self) -> Any:
        raise NotImplementedError

    async def pool(self) -> Any:
        if self._pool is None:
            if self._creating is None:
                self._creating = asyncio.ensure_future(self.create_pool())
            self._pool = await asyncio.shield(self._creating)
        return self._pool

    async def _round_trip(self) -> None:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)


class AsyncpgStore(_Pooled):
    """PostgreSQL from grpclib and grpc.aio: asyncpg, the fastest async driver."""

    COUNT = count_sql("$1")
    PAGE = page_sql(("$1", "$2", "$3"))

    def __init__(self, uri: str, delay_s: float = 0.0) -> None:
        super().__init__(delay_s)
        self.uri = uri

    async def create_pool(self) -> Any:
        import asyncpg

        return await asyncpg.create_pool(self.uri, min_size=1, max_size=QUERY_CONNECTIONS)

    async def count(self, keyword: str) -> int:
        await self._round_trip()
        return int(await (await self.pool()).fetchval(self.COUNT, f"%{keyword}%"))

    async def page(self, keyword: str, limit: int, offset: int) -> list[Row]:
        await self._round_trip()
        return list(await (await self.pool()).fetch(self.PAGE, f"%{keyword}%", limit, offset))


class AiomysqlStore(_Pooled):
    """MySQL from grpclib and grpc.aio: aiomysql, PyMySQL's protocol on asyncio, so both
    server families speak to MySQL through the same code."""

    COUNT = count_sql("%s")
    PAGE = page_sql(("%s", "%s", "%s"))

    def __init__(self, uri: str, delay_s: float = 0.0) -> None:
        super().__init__(delay_s)
        self.settings = mysql_settings(uri)

    async def create_pool(self) -> Any:
        import aiomysql

        settings = dict(self.settings)
        settings["db"] = settings.pop("database")  # aiomysql's older name
        return await aiomysql.create_pool(
            minsize=1, maxsize=QUERY_CONNECTIONS, autocommit=True, **settings
        )

    async def _execute(self, sql: str, args: tuple[Any, ...]) -> list[Row]:
        async with (await self.pool()).acquire() as connection, connection.cursor() as cursor:
            await cursor.execute(sql, args)
            return list(await cursor.fetchall())

    async def count(self, keyword: str) -> int:
        await self._round_trip()
        return int((await self._execute(self.COUNT, (f"%{keyword}%",)))[0][0])

    async def page(self, keyword: str, limit: int, offset: int) -> list[Row]:
        await self._round_trip()
        return await self._execute(self.PAGE, (f"%{keyword}%", limit, offset))


def _scheme(params: Mapping[str, Any]) -> str:
    return str(params.get("database_uri", "")).split("://", 1)[0]


def _delay(params: Mapping[str, Any]) -> float:
    return float(params.get("db_delay_ms", 0)) / 1000


def sync_store(params: Mapping[str, Any]) -> SyncStore:
    """The prepared database (see ``users.prepare``) for a sync server."""
    scheme = _scheme(params)
    if scheme.startswith("postgres"):
        return PsycopgStore(str(params["database_uri"]), _delay(params))
    if scheme == "mysql":
        return PyMysqlStore(str(params["database_uri"]), _delay(params))
    return SqliteStore(str(params["db_path"]), _delay(params))


def async_store(params: Mapping[str, Any]) -> AsyncStore:
    """The prepared database for an async server."""
    scheme = _scheme(params)
    if scheme.startswith("postgres"):
        return AsyncpgStore(str(params["database_uri"]), _delay(params))
    if scheme == "mysql":
        return AiomysqlStore(str(params["database_uri"]), _delay(params))
    return ThreadedStore(SqliteStore(str(params["db_path"]), _delay(params)))
