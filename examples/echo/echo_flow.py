"""A chain on the echo example: each call uses what the one before it returned.

    grpcbench run --service echo_service:SERVICE -s grpclib \\
        --workload echo_flow:flow --proto echo.proto

grpcbench calls ``flow(client)`` once per call of a level, on each virtual user
(or each tick of an open loop); every ``await client...`` is a step, timed and
counted under its ``name``.
"""

from __future__ import annotations

from typing import Any


async def flow(client: Any) -> None:
    said = await client.unary("echo.Echo/Say", {"message": "create"}, name="create")
    await client.unary("echo.Echo/Say", {"message": said.message + "/read"}, name="read")
    replies = await client.server_stream("echo.Echo/Expand", {"message": "x"}, name="list")
    if len(replies) > 100:  # a reply's fields steer the flow, as a client's code would
        await client.unary("echo.Echo/Say", {"message": "too many"}, name="report")


async def checked(client: Any) -> None:
    said = await client.unary("echo.Echo/Say", {"message": "hi"}, name="say")
    if not client.check("echoed", said.message == "hi"):  # counted, fails no call
        await client.unary("echo.Echo/Say", {"message": "report"}, name="report")
