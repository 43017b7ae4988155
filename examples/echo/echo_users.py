"""Virtual users with a life on the echo example: each logs in once, keeps what the
log-in returned, and logs out when the level's calls end.

    grpcbench run --service echo_service:SERVICE -s grpclib \\
        --workload echo_users:Shopper --proto echo.proto

A ``--workload`` class is Locust's user: one instance per virtual user, its
``on_start`` before its first flow (not in that flow's latency), its ``on_stop``
after its last. Their calls are steps, counted under their names.
"""

from __future__ import annotations

import itertools
from typing import Any

_numbers = itertools.count()


class Shopper:
    async def on_start(self, client: Any) -> None:
        login = {"message": f"session-{next(_numbers)}"}
        said = await client.unary("echo.Echo/Say", login, name="login")
        self.session = said.message  # the user's state, read by each of its flows
        self.bought = 0

    async def flow(self, client: Any) -> None:
        self.bought += 1
        order = {"message": f"{self.session}/buy/{self.bought}"}
        await client.unary("echo.Echo/Say", order, name="buy")

    async def on_stop(self, client: Any) -> None:
        goodbye = {"message": f"{self.session}/logout"}
        await client.unary("echo.Echo/Say", goodbye, name="logout")
