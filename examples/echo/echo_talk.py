"""An interactive bidi call on the echo example: each message is made from the last reply.

    grpcbench run --service echo_service:SERVICE -s grpclib \\
        --workload echo_talk:talk --proto echo.proto

``client.conversation`` is k6's ``Stream``: send, await a reply, decide, send again.
The whole conversation is one step, timed from its start until the server's status.
"""

from __future__ import annotations

from typing import Any


async def talk(client: Any) -> None:
    async with client.conversation("echo.Echo/Chat", name="chat") as chat:
        await chat.send({"message": "ping"})
        reply = await chat.receive()  # the next message depends on this reply
        while len(reply.message) < 20:
            await chat.send({"message": reply.message + "/ping"})
            reply = await chat.receive()
