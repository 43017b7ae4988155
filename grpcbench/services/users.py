"""Seed 000: fetch every matching user by unary pagination or by one server stream.

The data is a real database filled once per run (``prepare``): an embedded
PostgreSQL in processes of its own (the database extra; the seed's MySQL ran in
its own container), SQLite inside the server when the extra is missing, or the
user's own PostgreSQL or MySQL (``--database URL``). By default 110,000 users
whose names are 8 random letters from a-f, so ``LIKE '%ff%'`` matches about 16%
of them (the seed: 18K of 110K) and ``'%e%'`` about 77%. Both RPCs run the
seed's query, 1000 users per page by default (``user_stores``).

``StreamUsers`` counts the matches first, then fetches up to
``fetch_concurrency`` pages at once while it streams them in order. How that
concurrency is achieved differs per server kind, and is part of what is
measured: sync grpcio uses threads of a shared pool; grpclib and grpc.aio use
tasks awaiting an async driver (asyncpg, aiomysql; SQLite's queries in a thread
pool).
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grpcbench.base.errors import UsageError
from grpcbench.base.secrets import redact
from grpcbench.proto import users_pb2
from grpcbench.services.base import ServiceDefinition, generated_routes
from grpcbench.services.params import Param
from grpcbench.services.user_stores import (
    QUERY_CONNECTIONS,
    AsyncStore,
    Row,
    SyncStore,
    async_store,
    sync_store,
)
from grpcbench.services.users_workload import DEFAULT_PAGE_SIZE, json_request, workload

if TYPE_CHECKING:
    import grpc
    from grpclib.server import Stream

DEFAULT_USERS = 110_000
NAME_ALPHABET = "abcdef"
NAME_LENGTH = 8


# --- data ------------------------------------------------------------------------

# The database: "postgresql" (embedded, the default with the database extra),
# "sqlite" (the default without it), or a URL: postgresql://... or mysql://...
EMBEDDED_POSTGRES = "postgresql"
SQLITE = "sqlite"
SQLITE_FALLBACK = "sqlite (no database extra)"
CREATE_TABLE = (
    "CREATE TABLE users (id BIGINT PRIMARY KEY, name VARCHAR(16) NOT NULL,"
    " email VARCHAR(64) NOT NULL, created_at BIGINT NOT NULL)"
)


def generate_users(users: int, seed: int = 0) -> Iterator[tuple[int, str, str, int]]:
    """The same ``users`` random users in every database (deterministic for a seed)."""
    rng = random.Random(seed)
    for user_id in range(1, users + 1):
        name = "".join(rng.choice(NAME_ALPHABET) for _ in range(NAME_LENGTH))
        yield user_id, name, f"{name}.{user_id}@example.com", 1_600_000_000 + user_id


def build_database(path: Path, users: int, seed: int = 0) -> None:
    """Write ``users`` random users to a new SQLite file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    with sqlite3.connect(tmp) as db:
        db.execute(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " email TEXT NOT NULL, created_at INTEGER NOT NULL)"
        )
        db.executemany("INSERT INTO users VALUES (?, ?, ?, ?)", generate_users(users, seed))
    db.close()
    tmp.replace(path)


def complete_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Which database runs, named before the run so the header and results say it:
    embedded PostgreSQL with the database extra, else SQLite, saying why."""
    if params.get("database"):
        return dict(params)
    from grpcbench.backing.postgres import available

    return {**params, "database": EMBEDDED_POSTGRES if available() else SQLITE_FALLBACK}


def prepare(
    params: Mapping[str, Any], workdir: Path, stack: ExitStack | None = None
) -> dict[str, Any]:
    users = int(params.get("users", DEFAULT_USERS))
    database = str(params.get("database") or SQLITE)
    if database.startswith(SQLITE):
        path = workdir / f"users-{users}.sqlite"
        if not path.exists():
            build_database(path, users)
        return {**params, "db_path": str(path)}
    if database == EMBEDDED_POSTGRES:
        from grpcbench.backing.postgres import start_embedded

        assert stack is not None, "the embedded PostgreSQL lives on the run's exit stack"
        uri = start_embedded(stack)
    else:
        uri = database
    if uri.startswith("mysql://"):
        from grpcbench.backing.mysql import load_table as load_mysql

        load_mysql(uri, users, generate_users, CREATE_TABLE)
    else:
        from grpcbench.backing.postgres import load_table

        load_table(uri, users, generate_users, CREATE_TABLE)
    return {**params, "database_uri": uri}


def check_database(value: Any) -> None:
    text = str(value)
    if text in (EMBEDDED_POSTGRES, SQLITE, SQLITE_FALLBACK):
        return
    if not text.startswith(("postgresql://", "postgres://", "mysql://")):
        raise UsageError(
            f"bad database {redact(text)!r}: postgresql (embedded), sqlite, or a URL"
            " postgresql://USER@HOST:PORT/DB or mysql://USER@HOST:PORT/DB"
        )


def to_users(rows: Sequence[Row]) -> list[users_pb2.User]:
    return [users_pb2.User(id=r[0], name=r[1], email=r[2], created_at=r[3]) for r in rows]


def page_size_of(request: Any) -> int:
    return request.page_size if request.page_size > 0 else DEFAULT_PAGE_SIZE


def page_reply(
    request: users_pb2.ListUsersRequest, rows: Sequence[Row], total: int
) -> users_pb2.ListUsersResponse:
    size, offset = page_size_of(request), int(request.page_token or 0)
    next_token = str(offset + size) if len(rows) == size else ""
    return users_pb2.ListUsersResponse(
        users=to_users(rows), next_page_token=next_token, total=total
    )


def list_page(store: SyncStore, request: users_pb2.ListUsersRequest) -> users_pb2.ListUsersResponse:
    """One page; the total is counted on the first page only, as in the seed."""
    offset = int(request.page_token or 0)
    rows = store.page(request.keyword, page_size_of(request), offset)
    total = store.count(request.keyword) if offset == 0 else 0
    return page_reply(request, rows, total)


async def list_page_async(
    store: AsyncStore, request: users_pb2.ListUsersRequest
) -> users_pb2.ListUsersResponse:
    offset = int(request.page_token or 0)
    rows = await store.page(request.keyword, page_size_of(request), offset)
    total = await store.count(request.keyword) if offset == 0 else 0
    return page_reply(request, rows, total)


def page_count(total: int, size: int) -> int:
    return -(-total // size)


# --- servers ------------------------------------------------------------------------


class GrpcioUsers:
    """Sync grpcio: fetch concurrency = threads of a shared pool, a window per call."""

    def __init__(self, store: SyncStore) -> None:
        self.store = store
        self.pool = ThreadPoolExecutor(QUERY_CONNECTIONS, thread_name_prefix="page")

    def ListUsers(
        self, request: users_pb2.ListUsersRequest, context: grpc.ServicerContext
    ) -> users_pb2.ListUsersResponse:
        return list_page(self.store, request)

    def StreamUsers(
        self, request: users_pb2.StreamUsersRequest, context: grpc.ServicerContext
    ) -> Iterator[users_pb2.StreamUsersResponse]:
        size, keyword = page_size_of(request), request.keyword
        total = self.store.count(keyword)
        pages = page_count(total, size)
        window: deque[Future[list[Row]]] = deque()
        next_page = 0
        try:
            if pages == 0:
                yield users_pb2.StreamUsersResponse(total=0)
            for index in range(pages):
                while next_page < pages and len(window) < max(1, request.fetch_concurrency):
                    window.append(
                        self.pool.submit(self.store.page, keyword, size, next_page * size)
                    )
                    next_page += 1
                rows = window.popleft().result()
                yield users_pb2.StreamUsersResponse(
                    users=to_users(rows), total=total if index == 0 else 0
                )
        finally:
            for future in window:  # the client went away: do not fetch the rest
                future.cancel()


async def pages_in_order(
    store: AsyncStore, keyword: str, size: int, concurrency: int
) -> AsyncIterator[tuple[list[Row], int]]:
    """Async servers: up to ``concurrency`` page queries in flight, yielded in order."""
    total = await store.count(keyword)
    pages = page_count(total, size)
    window: deque[asyncio.Future[list[Row]]] = deque()
    next_page = 0
    try:
        if pages == 0:
            yield [], 0
        while next_page < pages or window:
            while next_page < pages and len(window) < max(1, concurrency):
                window.append(asyncio.ensure_future(store.page(keyword, size, next_page * size)))
                next_page += 1
            yield await window.popleft(), total
    finally:
        for query in window:
            query.cancel()


class AioUsers:
    def __init__(self, store: AsyncStore) -> None:
        self.store = store

    async def ListUsers(
        self, request: users_pb2.ListUsersRequest, context: grpc.aio.ServicerContext
    ) -> users_pb2.ListUsersResponse:
        return await list_page_async(self.store, request)

    async def StreamUsers(
        self, request: users_pb2.StreamUsersRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[users_pb2.StreamUsersResponse]:
        first = True
        async for rows, total in pages_in_order(
            self.store, request.keyword, page_size_of(request), request.fetch_concurrency
        ):
            yield users_pb2.StreamUsersResponse(users=to_users(rows), total=total if first else 0)
            first = False


class GrpclibUsers:
    def __init__(self, store: AsyncStore) -> None:
        self.store = store

    def __mapping__(self) -> dict[str, Any]:
        return generated_routes("grpcbench.proto.users_grpc", "UsersBase", self)

    async def ListUsers(
        self, stream: Stream[users_pb2.ListUsersRequest, users_pb2.ListUsersResponse]
    ) -> None:
        request = await stream.recv_message()
        assert request is not None
        await stream.send_message(await list_page_async(self.store, request))

    async def StreamUsers(
        self, stream: Stream[users_pb2.StreamUsersRequest, users_pb2.StreamUsersResponse]
    ) -> None:
        request = await stream.recv_message()
        assert request is not None
        first = True
        async for rows, total in pages_in_order(
            self.store, request.keyword, page_size_of(request), request.fetch_concurrency
        ):
            await stream.send_message(
                users_pb2.StreamUsersResponse(users=to_users(rows), total=total if first else 0)
            )
            first = False


def _register(server: Any, servicer: GrpcioUsers | AioUsers) -> None:
    from grpcbench.proto import users_pb2_grpc  # here: a grpclib child never imports grpc

    users_pb2_grpc.add_UsersServicer_to_server(servicer, server)


SERVICE = ServiceDefinition(
    name="users",
    description="users.Users: fetch all matching users by pagination or one server stream",
    service_names=("users.Users",),
    proto="grpcbench/proto/users.proto",
    register_grpcio=lambda server, params: _register(server, GrpcioUsers(sync_store(params))),
    register_aio=lambda server, params: _register(server, AioUsers(async_store(params))),
    grpclib_handlers=lambda params: [GrpclibUsers(async_store(params))],
    workload=workload,
    json_request=json_request,
    prepare=prepare,
    complete_params=complete_params,
    server_params={
        "users": Param(int, "rows in the users table", minimum=1),
        "database": Param(
            str,
            "postgresql (embedded), sqlite, or postgresql://... / mysql://...",
            validate=check_database,
        ),  # fmt: skip
        "db_delay_ms": Param(
            float, "a networked database's round trip before every query", minimum=0
        ),
    },
    workload_params={
        "keyword": Param(str, "fetch the users whose name contains it"),
        "page_size": Param(int, "users per page (and per stream message)", minimum=1),
        "mode": Param(str, "unary pagination or one server stream", ("paginate", "stream")),
        "fetch_concurrency": Param(int, "pages the streaming server fetches at once", minimum=1),
    },
)
