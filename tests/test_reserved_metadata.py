"""Metadata grpc sets itself, or HTTP/2 forbids, is refused by name on every spelling;
an --authority that would inject a header is refused; anything else passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grpcbench.base.errors import UsageError
from grpcbench.model.plan import LoadSettings
from grpcbench.rpc.metadata_text import RESERVED_METADATA, metadata_pairs, read_metadata

RESERVED = sorted(RESERVED_METADATA)


@pytest.mark.parametrize("key", RESERVED)
@pytest.mark.parametrize("spelling", ["key=value", "json", "file", "upper"])
def test_a_reserved_key_is_refused_by_name(key: str, spelling: str, tmp_path: Path) -> None:
    items: list[str] = []
    metadata_file = None
    if spelling == "key=value":
        items = [f"{key}=1"]
    elif spelling == "upper":
        items = [f"{key.upper()}=1"]
    elif spelling == "json":
        items = [json.dumps({key: "1"})]
    else:
        path = tmp_path / "m.json"
        path.write_text(json.dumps({key: "1"}))
        metadata_file = str(path)
    with pytest.raises(UsageError, match=f"{key} is reserved: "):
        read_metadata(items, metadata_file)


@given(st.from_regex(r"[0-9a-z_.-]{1,20}", fullmatch=True).filter(lambda k: k not in RESERVED))
def test_any_other_key_of_grpc_s_alphabet_passes(key: str) -> None:
    assert metadata_pairs({key: "v"}, "-m")[0][0] == key
    assert json.loads(read_metadata([f"{key}=v"], None)) == {key: "v"}


@given(st.text(min_size=1, max_size=30))
def test_an_authority_is_taken_only_when_it_cannot_inject_a_header(text: str) -> None:
    clean = all("!" <= char <= "~" for char in text)
    if clean:
        assert LoadSettings(authority=text).authority == text
    else:
        with pytest.raises(UsageError, match="bad --authority"):
            LoadSettings(authority=text)
