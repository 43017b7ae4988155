"""The dashboard's pages and its ingest API, in process (aiohttp's test client):
hostile uploads get one clear JSON error and leave nothing stored."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from grpcbench.history.store import Store
from tests.test_history_store import results

pytest.importorskip("aiohttp")
pytest.importorskip("otava")

Client = Any


def with_client(
    store: Store, check: Callable[[Client], Awaitable[None]], controls: dict[str, str] | None = None
) -> None:
    from aiohttp.test_utils import TestClient, TestServer

    from grpcbench.history.web import Dashboard, make_app

    async def main() -> None:
        async with TestClient(TestServer(make_app(Dashboard(store, controls)))) as client:
            await check(client)

    asyncio.run(main())


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'r.db'}")


def _series(store: Store, project: str = "p", regress_at: int = 20) -> None:
    for number in range(1, 21):
        store.save(project, results(1000 if number < regress_at else 1400, number), f"{number}")


HOSTILE: list[tuple[bytes, int, str]] = [
    (b"not json", 400, "not JSON"),
    (b"[" * 100_000 + b"]" * 100_000, 400, "not JSON"),
    (b"[1, 2]", 422, "not an object"),
    (json.dumps({"tool": "grpcbench", "format_version": 99}).encode(), 422, "version 99"),
    (json.dumps({"tool": "grpcbench", "format_version": "2"}).encode(), 422, "version '2'"),
    (json.dumps({"tool": "grpcbench", "format_version": 2}).encode(), 422, "not a results file"),
    (json.dumps({"tool": "ghz"}).encode(), 422, "tool 'ghz'"),
]


@pytest.mark.parametrize(("body", "status", "says"), HOSTILE)
def test_what_is_not_results_is_refused_and_nothing_stored(
    store: Store, body: bytes, status: int, says: str
) -> None:
    async def check(client: Client) -> None:
        answer = await client.post("/api/projects/p/runs", data=body)
        assert answer.status == status
        assert says in (await answer.json())["error"]

    with_client(store, check)
    assert store.projects() == []


def test_a_secret_in_the_metadata_is_refused_and_never_echoed(store: Store) -> None:
    data = results(1000, 1)
    data["metadata"] = {**data["metadata"], "argv": ["x", "--otlp-headers", "api-key=s3cr3t"],  # type: ignore[dict-item]
                        "headers": {"api-key": "s3cr3t"}}  # fmt: skip

    async def check(client: Client) -> None:
        answer = await client.post("/api/projects/p/runs", data=json.dumps(data))
        text = await answer.text()
        assert answer.status == 422 and "credential in the clear" in text
        assert "s3cr3t" not in text

    with_client(store, check)
    assert store.projects() == []


def test_a_file_over_the_limit_is_413(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from grpcbench.history import web

    monkeypatch.setattr(web, "MAX_UPLOAD_BYTES", 1 << 20)

    async def check(client: Client) -> None:
        answer = await client.post("/api/projects/p/runs", data=b" " * (2 << 20))
        assert answer.status == 413

    with_client(store, check)
    assert store.projects() == []


def test_a_token_when_set_is_required(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRPCBENCH_WEB_TOKEN", "t0k")
    body = json.dumps(results(1000, 1))

    async def check(client: Client) -> None:
        refused = await client.post("/api/projects/p/runs", data=body)
        assert refused.status == 401 and "t0k" not in await refused.text()
        taken = await client.post("/api/projects/p/runs", data=body,
                                  headers={"Authorization": "Bearer t0k"})  # fmt: skip
        assert taken.status == 201 and (await taken.json())["new"]
        again = await client.post("/api/projects/p/runs", data=body,
                                  headers={"Authorization": "Bearer t0k"})  # fmt: skip
        assert again.status == 200 and not (await again.json())["new"]

    with_client(store, check)
    assert [run.id for run in store.runs("p")] == [1]


def test_a_project_read_against_its_control_is_ok_when_the_control_moved_too(
    store: Store,
) -> None:
    """`web --control p=c`: the slowdown both show is the host's, so p's status is OK
    and its page says so; ``?control=`` reads p alone, where it is a regression."""
    _series(store, "p")
    _series(store, "c")
    _series(store, "alone")

    async def check(client: Client) -> None:
        home = await (await client.get("/")).text()
        assert home.count("REGRESSION: p50 (unconfirmed)") == 2, home  # c and alone
        row = home[home.index('href="/projects/p"') :].split("</tr>")[0]
        assert ">OK<" in row and "<td>c</td>" in row, row
        page = await (await client.get("/projects/p?figure=p50")).text()
        assert "Against the control project c" in page and "host at run 20" in page
        alone = await (await client.get("/projects/p?figure=p50&control=")).text()
        assert "regression at run 20" in alone and "Against the control" not in alone

    with_client(store, check, {"p": "c"})


@pytest.mark.parametrize("pairs", [["p"], ["p="], ["=c"], ["p=p"], ["p=c", "p=d"], ["p=bad\tname"]])
def test_a_bad_control_pair_is_one_line(pairs: list[str]) -> None:
    from grpcbench.base.errors import UsageError
    from grpcbench.cli.store_commands import parse_controls

    with pytest.raises(UsageError, match="bad --control|project"):
        parse_controls(pairs)
    assert parse_controls(["p=c", "q=c"]) == {"p": "c", "q": "c"}


def test_the_pages_show_status_history_runs_and_a_comparison(store: Store) -> None:
    _series(store, "steady", regress_at=99)
    _series(store, "<b>odd</b>")

    async def check(client: Client) -> None:
        home = await (await client.get("/")).text()
        assert "&lt;b&gt;odd&lt;/b&gt;" in home and "<b>odd" not in home
        assert (
            home.count("REGRESSION: p50 (unconfirmed), p99 (unconfirmed)") == 1
            and home.count(">OK<") == 1
        )
        page = await (await client.get("/projects/%3Cb%3Eodd%3C%2Fb%3E?figure=p50")).text()
        assert "regression at run 20" in page and "/static/uPlot.iife.min.js" in page
        assert "https://" not in page and "http://" not in page  # offline: nothing fetched
        run_page = await client.get("/runs/21")
        assert run_page.status == 200 and "grpcbench report" in await run_page.text()
        compared = await (await client.get("/compare?a=21&b=40")).text()
        assert "p50" in compared and "worse" in compared
        assert (await client.get("/compare?a=1")).status == 400
        assert (await client.get("/projects/none")).status == 404
        history = await (await client.get("/api/projects/steady/history?figure=rps")).json()
        assert len(history["runs"]) == 20 and history["change_points"] == []
        script = await client.get("/static/uPlot.iife.min.js")
        assert script.status == 200

    with_client(store, check)
