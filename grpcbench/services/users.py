"""Seed 000: fetch every matching user by unary pagination or by one server stream.

The data is a real SQLite database built once per run (``prepare``): by
default 110,000 users whose names are 8 random letters from a-f, so
``LIKE '%ff%'`` matches about 18% of them (the seed: 18K of 110K) and
``'%e%'`` about 77%. Both RPCs run ``... WHERE name LIKE ? ORDER BY id DESC
LIMIT ? OFFSET ?``, 1000 users per page by default.

``StreamUsers`` counts the matches first, then fetches up to
``fetch_concurrency`` pages at once while it streams them in order. How that
concurrency is achieved differs per server kind, and is part of what is
measured: sync grpcio uses threads of a shared pool; grpclib and grpc.aio use
tasks, each running its blocking SQLite query in a thread of a shared pool
(Python's sqlite3 has no async API).
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import grpc
from grpclib.server import Stream

from grpcbench.errors import UsageError
from grpcbench.proto import users_grpc, users_pb2, users_pb2_grpc
from grpcbench.services.base import CallStats, ReplyCounter, ServiceDefinition, WorkloadError
from grpcbench.services.params import Param

DEFAULT_USERS = 110_000
NAME_ALPHABET = "abcdef"
NAME_LENGTH = 8
DEFAULT_PAGE_SIZE = 1000
# Threads that run page queries, shared by all calls of a server process.
QUERY_THREADS = 100

Row = tuple[int, str, str, int]


# --- data ------------------------------------------------------------------------


def build_database(path: Path, users: int, seed: int = 0) -> None:
    """Write ``users`` random users to a new SQLite file (deterministic for a seed)."""
    rng = random.Random(seed)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    with sqlite3.connect(tmp) as db:
        db.execute(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " email TEXT NOT NULL, created_at INTEGER NOT NULL)"
        )
        rows = []
        for user_id in range(1, users + 1):
            name = "".join(rng.choice(NAME_ALPHABET) for _ in range(NAME_LENGTH))
            rows.append((user_id, name, f"{name}.{user_id}@example.com", 1_600_000_000 + user_id))
        db.executemany("INSERT INTO users VALUES (?, ?, ?, ?)", rows)
    db.close()
    tmp.replace(path)


def prepare(
    params: Mapping[str, Any], workdir: Path, stack: ExitStack | None = None
) -> dict[str, Any]:
    users = int(params.get("users", DEFAULT_USERS))
    path = workdir / f"users-{users}.sqlite"
    if not path.exists():
        build_database(path, users)
    return {**params, "db_path": str(path)}


class UserStore:
    """Read-only queries; one SQLite connection per thread (sqlite3 requires it).

    ``delay_s`` stands in for a networked database (the seed's MySQL in another
    container): every query first waits that long, off the CPU, in the thread
    that runs it - as a network round trip would - so fetch concurrency can
    overlap the waits even when the server has one core."""

    def __init__(self, path: str, delay_s: float = 0.0) -> None:
        self.uri = f"file:{path}?mode=ro"
        self.local = threading.local()
        self.delay_s = delay_s

    def _db(self) -> sqlite3.Connection:
        db = getattr(self.local, "db", None)
        if db is None:
            db = self.local.db = sqlite3.connect(self.uri, uri=True, check_same_thread=False)
        return db

    def _round_trip(self) -> None:
        if self.delay_s:
            time.sleep(self.delay_s)

    def count(self, keyword: str) -> int:
        self._round_trip()
        query = "SELECT COUNT(1) FROM users WHERE name LIKE ?"
        return int(self._db().execute(query, (f"%{keyword}%",)).fetchone()[0])

    def page(self, keyword: str, limit: int, offset: int) -> list[Row]:
        self._round_trip()
        query = (
            "SELECT id, name, email, created_at FROM users WHERE name LIKE ?"
            " ORDER BY id DESC LIMIT ? OFFSET ?"
        )
        return self._db().execute(query, (f"%{keyword}%", limit, offset)).fetchall()


def to_users(rows: list[Row]) -> list[users_pb2.User]:
    return [users_pb2.User(id=r[0], name=r[1], email=r[2], created_at=r[3]) for r in rows]


def page_size_of(request: Any) -> int:
    return request.page_size if request.page_size > 0 else DEFAULT_PAGE_SIZE


def list_page(store: UserStore, request: users_pb2.ListUsersRequest) -> users_pb2.ListUsersResponse:
    """One page; the total is counted on the first page only, as in the seed."""
    size = page_size_of(request)
    offset = int(request.page_token or 0)
    rows = store.page(request.keyword, size, offset)
    total = store.count(request.keyword) if offset == 0 else 0
    next_token = str(offset + size) if len(rows) == size else ""
    return users_pb2.ListUsersResponse(
        users=to_users(rows), next_page_token=next_token, total=total
    )


def page_count(total: int, size: int) -> int:
    return -(-total // size)


# --- servers ------------------------------------------------------------------------


class GrpcioUsers(users_pb2_grpc.UsersServicer):
    """Sync grpcio: fetch concurrency = threads of a shared pool, a window per call."""

    def __init__(self, store: UserStore) -> None:
        self.store = store
        self.pool = ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="page")

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
    store: UserStore, pool: ThreadPoolExecutor, keyword: str, size: int, concurrency: int
) -> AsyncIterator[tuple[list[Row], int]]:
    """Async servers: up to ``concurrency`` page queries in flight, yielded in order."""
    loop = asyncio.get_running_loop()
    total = await loop.run_in_executor(pool, store.count, keyword)
    pages = page_count(total, size)
    window: deque[asyncio.Future[list[Row]]] = deque()
    next_page = 0
    try:
        if pages == 0:
            yield [], 0
        while next_page < pages or window:
            while next_page < pages and len(window) < max(1, concurrency):
                query = loop.run_in_executor(pool, store.page, keyword, size, next_page * size)
                window.append(query)
                next_page += 1
            yield await window.popleft(), total
    finally:
        for query in window:
            query.cancel()


class AioUsers(users_pb2_grpc.UsersServicer):
    def __init__(self, store: UserStore) -> None:
        self.store = store
        self.pool = ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="page")

    async def ListUsers(
        self, request: users_pb2.ListUsersRequest, context: grpc.aio.ServicerContext
    ) -> users_pb2.ListUsersResponse:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, list_page, self.store, request)

    async def StreamUsers(
        self, request: users_pb2.StreamUsersRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[users_pb2.StreamUsersResponse]:
        first = True
        async for rows, total in pages_in_order(
            self.store, self.pool, request.keyword, page_size_of(request), request.fetch_concurrency
        ):
            yield users_pb2.StreamUsersResponse(users=to_users(rows), total=total if first else 0)
            first = False


class GrpclibUsers(users_grpc.UsersBase):
    def __init__(self, store: UserStore) -> None:
        self.store = store
        self.pool = ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="page")

    async def ListUsers(
        self, stream: Stream[users_pb2.ListUsersRequest, users_pb2.ListUsersResponse]
    ) -> None:
        request = await stream.recv_message()
        assert request is not None
        loop = asyncio.get_running_loop()
        await stream.send_message(
            await loop.run_in_executor(self.pool, list_page, self.store, request)
        )

    async def StreamUsers(
        self, stream: Stream[users_pb2.StreamUsersRequest, users_pb2.StreamUsersResponse]
    ) -> None:
        request = await stream.recv_message()
        assert request is not None
        first = True
        async for rows, total in pages_in_order(
            self.store, self.pool, request.keyword, page_size_of(request), request.fetch_concurrency
        ):
            await stream.send_message(
                users_pb2.StreamUsersResponse(users=to_users(rows), total=total if first else 0)
            )
            first = False


def _store(params: Mapping[str, Any]) -> UserStore:
    return UserStore(str(params["db_path"]), float(params.get("db_delay_ms", 0)) / 1000)


# --- client -----------------------------------------------------------------------------


class _Checker:
    """Every matching user exactly once, in the promised order (ids descending)."""

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword
        self.last_id: int | None = None
        self.items = 0

    def add(self, users: Any) -> None:
        for user in users:
            if self.last_id is not None and user.id >= self.last_id:
                raise WorkloadError(
                    f"user {user.id} after {self.last_id}: repeated or out of order"
                )
            if self.keyword not in user.name:
                raise WorkloadError(f"user {user.id} ({user.name}) does not match {self.keyword!r}")
            self.last_id = user.id
            self.items += 1

    def finish(self, total: int) -> None:
        if self.items != total:
            raise WorkloadError(f"received {self.items} users, the server counted {total}")


class PaginateWorkload:
    """One call = ListUsers page after page until the last page (all matches)."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.keyword = str(params.get("keyword", "ff"))
        self.page_size = int(params.get("page_size", DEFAULT_PAGE_SIZE))

    def bind(self, channel: grpc.aio.Channel) -> Any:
        method = channel.unary_unary(
            "/users.Users/ListUsers",
            request_serializer=users_pb2.ListUsersRequest.SerializeToString,
            response_deserializer=users_pb2.ListUsersResponse.FromString,
        )

        async def call(timeout: float) -> CallStats:
            replies = ReplyCounter()
            deadline = replies.started + timeout
            checker = _Checker(self.keyword)
            token, total = "", 0
            while True:
                reply = await method(
                    users_pb2.ListUsersRequest(
                        keyword=self.keyword, page_size=self.page_size, page_token=token
                    ),
                    timeout=max(deadline - time.perf_counter(), 0.001),
                )
                if replies.messages == 0:
                    total = reply.total  # counted on the first page only
                replies.add(reply)
                checker.add(reply.users)
                token = reply.next_page_token
                if not token:
                    break
            checker.finish(total)
            return replies.stats(items=checker.items)

        return call


class StreamWorkload:
    """One call = one StreamUsers stream read to its end (all matches)."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.request = users_pb2.StreamUsersRequest(
            keyword=str(params.get("keyword", "ff")),
            page_size=int(params.get("page_size", DEFAULT_PAGE_SIZE)),
            fetch_concurrency=int(params.get("fetch_concurrency", 1)),
        )

    def bind(self, channel: grpc.aio.Channel) -> Any:
        method = channel.unary_stream(
            "/users.Users/StreamUsers",
            request_serializer=users_pb2.StreamUsersRequest.SerializeToString,
            response_deserializer=users_pb2.StreamUsersResponse.FromString,
        )

        async def call(timeout: float) -> CallStats:
            replies = ReplyCounter()
            checker = _Checker(self.request.keyword)
            total = 0
            async for reply in method(self.request, timeout=timeout):
                if replies.messages == 0:
                    total = reply.total  # set in the first message only
                replies.add(reply)
                checker.add(reply.users)
            checker.finish(total)
            return replies.stats(items=checker.items)

        return call


def json_request(params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """One call reads one stream; it cannot follow next-page tokens from call to call."""
    if str(params.get("mode", "stream")) != "stream":
        raise UsageError("ghz cannot page through ListUsers (each page needs the previous"
                         " token): run the paginate variant with --load builtin")  # fmt: skip
    request = StreamWorkload(params).request
    data = {"keyword": request.keyword, "page_size": request.page_size,
            "fetch_concurrency": request.fetch_concurrency}  # fmt: skip
    return "users.Users.StreamUsers", data


def workload(params: Mapping[str, Any]) -> PaginateWorkload | StreamWorkload:
    mode = str(params.get("mode", "stream"))
    if mode == "paginate":
        return PaginateWorkload(params)
    if mode == "stream":
        return StreamWorkload(params)
    raise ValueError(f"unknown users workload mode {mode!r} (paginate or stream)")


SERVICE = ServiceDefinition(
    name="users",
    description="users.Users: fetch all matching users by pagination or one server stream",
    service_names=("users.Users",),
    proto="grpcbench/proto/users.proto",
    register_grpcio=lambda server, params: users_pb2_grpc.add_UsersServicer_to_server(
        GrpcioUsers(_store(params)), server
    ),
    register_aio=lambda server, params: users_pb2_grpc.add_UsersServicer_to_server(
        AioUsers(_store(params)), server
    ),
    grpclib_handlers=lambda params: [GrpclibUsers(_store(params))],
    workload=workload,
    json_request=json_request,
    prepare=prepare,
    server_params={
        "users": Param(int, "rows in the users table", minimum=1),
        "db_delay_ms": Param(
            float, "a networked database's round trip before every query (seed 000)", minimum=0
        ),
    },
    workload_params={
        "keyword": Param(str, "fetch the users whose name contains it"),
        "page_size": Param(int, "users per page (and per stream message)", minimum=1),
        "mode": Param(str, "unary pagination or one server stream", ("paginate", "stream")),
        "fetch_concurrency": Param(int, "pages the streaming server fetches at once", minimum=1),
    },
)
