"""k6's setup() and teardown(data) on the echo example: a shop opened once for the
server, its name in every flow, closed after the last level.

    grpcbench run --service echo_service:SERVICE -s grpclib \\
        --workload echo_setup:buy --proto echo.proto

``setup`` runs once per server, before the pre-flight call and its first level;
``teardown`` after its last level. Their calls are not measured. What ``setup``
returns is JSON that every generator process (and Dask worker) gets a copy of, as
``client.setup_data``; it is never printed or saved.
"""

from __future__ import annotations

from typing import Any


async def setup(client: Any) -> dict[str, str]:
    opened = await client.unary("echo.Echo/Say", {"message": "shop-7"}, name="open")
    return {"shop": opened.message}  # e.g. an id or a token the server made


async def buy(client: Any) -> None:
    order = {"message": f"{client.setup_data['shop']}/buy"}
    await client.unary("echo.Echo/Say", order, name="buy")


async def teardown(client: Any, data: dict[str, str]) -> None:
    await client.unary("echo.Echo/Say", {"message": f"{data['shop']}/close"}, name="close")
