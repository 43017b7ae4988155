"""What is saved of a run's options (``RecordedOptions``): what was asked, never a
secret. Its own module, apart from building the options, because every reader of
a run (the header, the dry run, the results file) asks it and none of them needs
how the options were built."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from grpcbench.base.secrets import mask_params, redact
from grpcbench.model.results import RecordedOptions
from grpcbench.run.options import RunOptions

RECORDED_DATA_BYTES = 64 << 10  # request data saved as given up to this; digested past it


def recorded_options(options: RunOptions) -> RecordedOptions:
    """What is saved of a run's options with its results: params masked where declared
    secret, the call's data redacted, its metadata's keys and never their values."""
    return RecordedOptions(
        scenario=options.scenario.name,
        service=options.scenario.service,
        server_params=mask_params(dict(options.scenario.server_params), options.secret_params),
        workload_params=mask_params(dict(options.scenario.workload_params), options.secret_params),
        targets=options.column_labels,
        drivers=options.drivers,
        levels=options.levels,
        settings=options.settings,
        placement=options.placement,
        client_processes=options.driver_settings.client_processes,
        repeat=options.repeat,
        call=_recorded_call(options),
        name=options.name,
        tags=dict(options.tags),
        thresholds=tuple(t.text for t in options.thresholds),
    )


def _recorded_call(options: RunOptions) -> dict[str, Any]:
    """The call as saved: its data, never its metadata's values (credentials)."""
    if options.flow is not None:
        return {
            "workload": options.flow.function,
            "metadata_keys": _metadata_keys(options.flow.metadata),
            "security": options.security.describe(),
        }
    if options.call is None:
        return {"security": options.security.describe()} if options.security.tls else {}
    call = options.call
    recorded = {
        "method": call.method,
        "given": call.given or call.method,
        "schema": call.schema_source,
        "import_paths": list(call.import_paths),
        **_recorded_data(call.data, call.data_path),
        "metadata_keys": _metadata_keys(call.metadata),
        "stream_messages": call.stream_messages,
        "security": options.security.describe(),
    }
    if call.mix and call.mix_order != "cycle":
        recorded["mix_order"] = call.mix_order
    if call.mix:
        recorded["mix"] = [
            {
                "method": part.method,
                "name": part.label or part.method,
                "weight": part.weight,
                **_recorded_data(part.data, part.data_path),
                "metadata_keys": _metadata_keys(part.metadata),
                "timeout_s": part.timeout_s,
                # [[scenarios]]: each runs its own executor (its weight means nothing).
                **({"executor": scenario.describe()} if scenario else {}),
            }
            for part, scenario in zip(
                call.mix, options.scenario.level_scenarios or (None,) * len(call.mix), strict=True
            )
        ]
    return recorded


def _recorded_data(data: str, path: str) -> dict[str, Any]:
    """The request data as saved: as given up to ``RECORDED_DATA_BYTES``; a larger one as
    its digest, size and file, so a 3 MB request does not make a 4 MB results file."""
    if len(data) <= RECORDED_DATA_BYTES:
        return {"data": redact(data)}
    encoded = data.encode()
    return {
        "data_sha256": hashlib.sha256(encoded).hexdigest(),
        "data_bytes": len(encoded),
        "data_path": path,
    }


def _metadata_keys(metadata: str) -> list[str]:
    """What is saved of metadata: its keys, never its values (credentials)."""
    return list(json.loads(metadata)) if metadata.strip() else []
