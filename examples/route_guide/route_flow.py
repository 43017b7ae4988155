"""Flows on grpc-go's route_guide: a chain (a feature, then the features at its
location), and a visit to each point of a feeder in turn.

grpcbench run 127.0.0.1:50051 --workload route_flow:chain --proto route_guide.proto
grpcbench run 127.0.0.1:50051 --workload route_flow:visit --proto route_guide.proto
"""

from __future__ import annotations

from typing import Any

START = {"latitude": 409146138, "longitude": -746188906}


async def chain(client: Any) -> None:
    feature = await client.unary("routeguide.RouteGuide/GetFeature", START, name="get")
    here = {"latitude": feature.location.latitude, "longitude": feature.location.longitude}
    await client.server_stream(
        "routeguide.RouteGuide/ListFeatures", {"lo": here, "hi": here}, name="list"
    )


async def visit(client: Any) -> None:
    point = client.row("points.jsonl")  # the feeder's next row, as a dict
    await client.unary("routeguide.RouteGuide/GetFeature", point, name="feature")
