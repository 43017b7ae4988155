"""``grpcbench web``: the dashboard of a results store, served by aiohttp on 127.0.0.1.

Pages: projects with the newest run's status; a project's history of a figure
with change points; a run (today's HTML report); two runs compared. The ingest API
takes a results file by ``POST /api/projects/NAME/runs`` and refuses what is not
results (400/413/422, one JSON line saying why, nothing stored).
``GRPCBENCH_WEB_TOKEN``, when set, is the bearer token every POST must carry.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grpcbench.base.errors import OneLineError, UsageError
from grpcbench.base.interrupts import run_until_interrupted
from grpcbench.history import pages
from grpcbench.history.history import STATUS_FIGURES, History, check_figure, load_history, refresh
from grpcbench.history.store import Store, check_project, parse_results

if TYPE_CHECKING:
    from aiohttp import web

EXTRA_HINT = "pip install 'grpcbench[web]'"
TOKEN_ENV = "GRPCBENCH_WEB_TOKEN"
MAX_UPLOAD_BYTES = 64 << 20
STATIC = Path(__file__).parent / "static"


class Dashboard:
    """The store behind the pages; histories cached until a run is added. ``controls``
    (``--control PROJECT=CONTROL``): the control project each project's status and
    page are read against, unless a page asks for another."""

    def __init__(self, store: Store, controls: dict[str, str] | None = None) -> None:
        self.store = store
        self.controls = dict(controls or {})
        self._cache: dict[tuple[str, str, str | None, str | None], tuple[int, History]] = {}

    def history(
        self, project: str, figure: str, series: str | None = None, control: str | None = None
    ) -> History:
        runs = self.store.runs(project) + (self.store.runs(control) if control else [])
        newest = max((run.id for run in runs), default=0)  # ids grow: a new run changes it
        key = (project, figure, series, control)
        cached = self._cache.get(key)
        if cached is None or cached[0] != newest:
            found = load_history(self.store, project, figure, series, control=control)
            cached = (newest, found)
            self._cache[key] = cached
        return cached[1]

    def status(self, project: str) -> list[str]:
        """The figures whose regression the newest run starts (unconfirmed) or confirms."""
        failed = []
        control = self.controls.get(project)
        for figure in STATUS_FIGURES:
            newest = self.history(project, figure, control=control).newest_regressions()
            if newest:
                sure = any(change.confirmed for change in newest)
                failed.append(figure if sure else f"{figure} (unconfirmed)")
        return failed


def _html(text: str, status: int = 200) -> web.Response:
    from aiohttp import web

    return web.Response(text=text, content_type="text/html", status=status)


def _error(status: int, message: str) -> web.Response:
    from aiohttp import web

    return web.json_response({"error": message}, status=status)


def make_app(dashboard: Dashboard) -> web.Application:
    from aiohttp import web

    routes = web.RouteTableDef()

    async def in_thread(call: Any, *args: Any) -> Any:
        return await asyncio.to_thread(call, *args)

    @routes.get("/")
    async def projects(request: web.Request) -> web.Response:
        def rows() -> list[tuple[str, int, str | None, list[str], str | None]]:
            return [(name, runs, newest, dashboard.status(name) if runs else [],
                     dashboard.controls.get(name))
                    for name, runs, newest in dashboard.store.projects()]  # fmt: skip

        return _html(pages.projects_page(await in_thread(rows)))

    @routes.get("/projects/{name}")
    async def project(request: web.Request) -> web.Response:
        figure = request.query.get("figure", "p50")
        series = request.query.get("series") or None
        name = request.match_info["name"]
        control = request.query.get("control", dashboard.controls.get(name)) or None
        try:
            check_figure(figure)
            found = await in_thread(dashboard.history, name, figure, series, control)
        except UsageError as error:
            return _html(pages.page("Not found", f"<p>{pages._e(error)}</p>"), 404)
        return _html(pages.project_page(found, series, control))

    @routes.get("/runs/{run_id:\\d+}")
    async def run(request: web.Request) -> web.Response:
        def report() -> str:
            from grpcbench.report.html import render_html

            data = dashboard.store.results(int(request.match_info["run_id"]))
            return render_html(parse_results(data)).decode()

        try:
            return _html(await in_thread(report))
        except UsageError as error:
            return _html(pages.page("Not found", f"<p>{pages._e(error)}</p>"), 404)

    @routes.get("/compare")
    async def compare(request: web.Request) -> web.Response:
        def table() -> str:
            from grpcbench.report.compare import compare_runs, to_markdown

            a, b = int(request.query["a"]), int(request.query["b"])
            older, newer = (parse_results(dashboard.store.results(one)) for one in (a, b))
            lines = to_markdown(compare_runs(older, newer)).splitlines()
            cells = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]
            return pages.compare_page(a, b, cells[0], cells[2:])

        try:
            return _html(await in_thread(table))
        except (KeyError, ValueError):
            return _html(pages.page("Bad request", "<p>compare needs ?a=RUN&amp;b=RUN</p>"), 400)
        except UsageError as error:
            return _html(pages.page("Cannot compare", f"<p>{pages._e(error)}</p>"), 422)

    @routes.get("/api/projects/{name}/history")
    async def history_json(request: web.Request) -> web.Response:
        try:
            figure = check_figure(request.query.get("figure", "p50"))
            found = await in_thread(dashboard.history, request.match_info["name"], figure)
        except UsageError as error:
            return _error(404, str(error))
        return web.json_response(found.to_json())

    @routes.post("/api/projects/{name}/runs")
    async def ingest(request: web.Request) -> web.Response:
        token = os.environ.get(TOKEN_ENV)
        given = request.headers.get("Authorization", "")
        if token and not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return _error(401, f"a POST needs Authorization: Bearer <{TOKEN_ENV}>")
        try:
            name = check_project(request.match_info["name"])
            body = await request.read()
        except UsageError as error:
            return _error(400, str(error))
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"a results file of at most {MAX_UPLOAD_BYTES >> 20} MiB")
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            return _error(400, "not JSON: POST a results file written by `run --output`")
        try:
            saved = await in_thread(dashboard.store.save, name, data, "POST /api")
        except OneLineError as error:
            return _error(422, str(error))
        if saved.new:
            await in_thread(refresh, dashboard.store, name)
        return web.json_response(
            {"id": saved.id, "new": saved.new}, status=201 if saved.new else 200
        )

    app = web.Application(client_max_size=MAX_UPLOAD_BYTES)
    app.add_routes(routes)
    app.router.add_static("/static", STATIC)
    return app


def serve(
    store: Store, host: str, port: int, ready: Any, controls: dict[str, str] | None = None
) -> None:
    """Serve until Ctrl-C; ``ready(url)`` is told where, once listening."""
    try:
        from aiohttp import web
    except ImportError:
        raise UsageError(f"grpcbench web needs aiohttp: {EXTRA_HINT}") from None

    async def main() -> None:
        runner = web.AppRunner(make_app(Dashboard(store, controls)), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as error:
            await runner.cleanup()
            raise UsageError(f"cannot listen on {host}:{port}: {error.strerror}") from None
        bound = runner.addresses[0]
        ready(f"http://{bound[0]}:{bound[1]}/" if ":" not in bound[0] else
              f"http://[{bound[0]}]:{bound[1]}/")  # fmt: skip
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    run_until_interrupted(main())  # Ctrl-C or SIGTERM: the listener closed, exit 130/143
