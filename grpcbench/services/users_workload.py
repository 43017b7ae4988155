"""Seed 000's client side: every matching user fetched by unary pagination
(``PaginateWorkload``) or by one server stream (``StreamWorkload``), each checked to
hold every match exactly once, in order (``_Checker``)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from grpcbench.base.errors import UsageError
from grpcbench.contract.calls import CallStats, ReplyCounter, WorkloadError
from grpcbench.proto import users_pb2

if TYPE_CHECKING:
    import grpc

DEFAULT_PAGE_SIZE = 1000


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
