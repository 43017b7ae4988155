"""The ``--workload`` module's ``setup`` and ``teardown`` around one server's levels.

k6's once-per-test hooks (``rpc.setup_teardown``), here once per server: ``set_up``
before the pre-flight call (whose flow may need the data), ``tear_down`` before the
server closes. Both run where the checks run (``targets.check_site``), bounded as
the pre-flight call is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from grpcbench.base.errors import OneLineError
from grpcbench.model.plan import LoadSettings
from grpcbench.rpc.client_options import ClientOptions
from grpcbench.rpc.flow import PlannedFlow
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.rpc.setup_teardown import HOOK_LIMIT_S, hooks_of, run_hook_here
from grpcbench.run.preflight_call import bounded
from grpcbench.targets.base import Target
from grpcbench.targets.check_site import CheckSite


class FlowLife:
    """``flow`` is the --workload with its setup()'s data for the server set up last."""

    def __init__(
        self, flow: PlannedFlow | None, settings: LoadSettings, warn: Callable[[str], None]
    ) -> None:
        self.flow = flow
        self.settings = settings
        self.warn = warn
        self.hooks = hooks_of(flow.function) if flow else {}
        self._set_up: Target | None = None  # the target whose setup ran (teardown's)

    async def set_up(self, target: Target, security: ChannelSecurity, site: CheckSite) -> None:
        """The module's ``setup`` for ``target``; a failure stops the run (exit 5)."""
        if not self.hooks:
            return
        if "setup" in self.hooks:
            data = await self._hook("setup", target, security, site)
            assert self.flow is not None and data is not None
            self.flow = replace(self.flow, setup_data=data)
        self._set_up = target

    async def tear_down(self, target: Target, security: ChannelSecurity, site: CheckSite) -> None:
        """The module's ``teardown`` for ``target``, if it was set up; a failure is a
        warning, as what was measured stands."""
        if self._set_up is not target:
            return
        self._set_up = None
        try:
            await self._hook("teardown", target, security, site)
        except OneLineError as error:
            self.warn(f"{target.label}: {error}")

    async def _hook(
        self, name: str, target: Target, security: ChannelSecurity, site: CheckSite
    ) -> str:
        settings, flow = self.settings, self.flow
        assert flow is not None
        check = site(
            run_hook_here, name, target.address, security, flow.to_json(),
            settings.timeout_s, ClientOptions.of(settings), settings.connect_timeout_s,
        )  # fmt: skip
        limit = HOOK_LIMIT_S + settings.connect_timeout_s + settings.stall_limit_s
        what = f"the workload's {name}()"
        data: str = await bounded(check, what, limit, settings.generator_memory_bytes)
        return data
