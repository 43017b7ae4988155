import pytest

from grpcbench.base.defaults import SERVERS as DEFAULT_SERVERS
from grpcbench.base.errors import UsageError
from grpcbench.servers.spec import parse_server_spec, parse_server_specs


def test_defaults_are_filled_in() -> None:
    spec = parse_server_spec("grpcio")
    assert spec.option("workers") == 10
    assert spec.label == "grpcio:workers=10"


@pytest.mark.parametrize("text", DEFAULT_SERVERS)
def test_labels_round_trip(text: str) -> None:
    assert parse_server_spec(text).label == text
    assert parse_server_spec(parse_server_spec(text).label) == parse_server_spec(text)


def test_default_options_stay_out_of_labels_except_workers() -> None:
    assert parse_server_spec("grpcio:processes=1").label == "grpcio:workers=10"
    assert parse_server_spec("grpcio:processes=4,workers=2").label == "grpcio:workers=2,processes=4"


def test_uvloop_modifier() -> None:
    spec = parse_server_spec("grpclib+uvloop")
    assert spec.kind == "grpclib" and spec.uvloop


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tornado", "unknown server kind 'tornado'"),
        ("grpcio+uvloop", "synchronous"),
        ("grpclib+trio", "unknown modifier"),
        ("grpcio:threads=2", "unknown option 'threads'"),
        ("grpcio:workers=0", "positive integer"),
        ("grpcio:workers", "positive integer"),
        ("grpclib:workers=2", "unknown option"),
    ],
)
def test_bad_specs(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_server_spec(text)


def test_lists_by_repetition_spaces_or_semicolons() -> None:
    specs = parse_server_specs(["grpcio:workers=1 grpclib", "grpcio-aio;grpclib+uvloop"])
    assert [s.label for s in specs] == [
        "grpcio:workers=1", "grpclib", "grpcio-aio", "grpclib+uvloop",
    ]  # fmt: skip


def test_duplicate_specs_rejected() -> None:
    with pytest.raises(UsageError, match="twice"):
        parse_server_specs(["grpcio", "grpcio:workers=10"])
