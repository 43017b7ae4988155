"""`grpcbench list` and `describe`, grpcurl's way: from --proto, --protoset or reflection."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.rpc.catalog import open_catalog
from grpcbench.rpc.security import PLAINTEXT
from tests.conftest import GRPCBENCH

SCHEMA = """syntax = "proto3";
package t;
service Store {
  rpc Get (A) returns (B);
  rpc Watch (A) returns (stream B);
  rpc Chat (stream A) returns (stream B);
}
message A {
  optional int32 x = 1;
  map<string, B> m = 2;
  oneof k { string s = 3; int64 n = 4; }
  repeated B bs = 5;
  message Inner { E e = 1; }
  enum E { ZERO = 0; ONE = 1; }
}
message B { bytes data = 1; }
"""


@pytest.fixture
def proto(tmp_path: Path) -> str:
    path = tmp_path / "t.proto"
    path.write_text(SCHEMA)
    return str(path)


def test_a_proto_file_lists_and_describes_as_grpcurl_does(proto: str) -> None:
    with open_catalog(None, PLAINTEXT, proto=proto) as catalog:
        assert catalog.services == ["t.Store"]
        assert catalog.methods("t.Store") == ["t.Store.Chat", "t.Store.Get", "t.Store.Watch"]
        assert catalog.describe("t.Store/Watch") == (
            "t.Store.Watch is a method:\nrpc Watch ( .t.A ) returns ( stream .t.B );"
        )
        assert catalog.describe("t.Store").splitlines()[-2] == (  # by name, as grpcurl
            "  rpc Watch ( .t.A ) returns ( stream .t.B );"
        )
        assert catalog.describe(".t.A") == "\n".join([
            "t.A is a message:", "message A {", "  optional int32 x = 1;",
            "  map<string, .t.B> m = 2;", "  oneof k {", "    string s = 3;",
            "    int64 n = 4;", "  }", "  repeated .t.B bs = 5;", "  message Inner {",
            "    .t.A.E e = 1;", "  }", "  enum E {", "    ZERO = 0;", "    ONE = 1;", "  }", "}",
        ])  # fmt: skip
        assert catalog.describe("t.A.E").startswith("t.A.E is an enum:")
        with pytest.raises(UsageError, match="symbol t.Stor not found.*did you mean t.Store"):
            catalog.describe("t.Stor")
        with pytest.raises(UsageError, match="no service t.Nope"):
            catalog.methods("t.Nope")


def test_without_a_schema_or_an_address_is_one_line() -> None:
    with (
        pytest.raises(UsageError, match="give the server's HOST:PORT"),
        open_catalog(None, PLAINTEXT),
    ):
        pass


@pytest.mark.integration
def test_reflection_with_its_metadata_and_the_command_lines(proto: str, tmp_path: Path) -> None:
    """Through the CLI: reflection behind a token (--reflect-metadata) and over TLS, a
    proto file, and one line with exit 2 for an unknown symbol or an unreachable server."""
    from tests.support.echo_server import SERVER_NAME, echo_server, make_certificates

    def grpcbench(*words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*GRPCBENCH, *words], capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip

    with echo_server(token="t0k", guard_reflection=True) as address:
        token = ["--reflect-metadata", '{"authorization": "Bearer t0k"}']
        listed = grpcbench("list", address, *token)
        assert listed.returncode == 0 and "echo.Echo" in listed.stdout.split(), listed.stderr
        methods = grpcbench("list", address, "echo.Echo", *token).stdout.split()
        assert "echo.Echo.Say" in methods
        described = grpcbench("describe", address, "echo.Echo.Say", *token)
        assert described.stdout.startswith("echo.Echo.Say is a method:\nrpc Say ( .echo.")
        refused = grpcbench("list", address)
        assert refused.returncode == 2 and "no reflection service" in refused.stderr
        assert refused.stderr.count("\n") == 1
    tls = make_certificates(tmp_path)
    with echo_server(tls=tls) as address:
        listed = grpcbench("list", address, "--cacert", str(tls.ca), "--cname", SERVER_NAME)
        assert "echo.Echo" in listed.stdout.split(), listed.stderr
    assert grpcbench("list", "--proto", proto).stdout.split() == ["t.Store"]
    assert grpcbench("describe", "--proto", proto, "t.B").stdout.startswith("t.B is a message:")
    missing = grpcbench("describe", "--proto", proto, "t.Nope")
    assert missing.returncode == 2 and missing.stderr.startswith("grpcbench: error: symbol t.Nope")
    unreachable = grpcbench("list", "127.0.0.1:1")
    assert unreachable.returncode == 2 and "cannot reach target 127.0.0.1:1" in unreachable.stderr


COMMENTED = """syntax = "proto3";
package c;
// detached, never printed

// Leading of S.
service S { // trailing, never printed
  // lead m
  rpc M (R) returns (R); // trail m
}
/* block
   comment */
message R {
  // lead f
  string name = 1; // trail f
  /* lead g */ int32 g = 2;
  // lead E
  enum E { A = 0; // trail A
  }
  map<string, int32> sizes = 3; // map trail
}
"""


def test_describe_from_a_proto_prints_leading_comments_and_fields_as_grpcurl(
    tmp_path: Path,
) -> None:
    """What grpcurl v1.9.4 printed for this file (its -proto), line for line: leading
    comments only, block comments as // lines; a field described alone."""
    (tmp_path / "c.proto").write_text(COMMENTED)
    with open_catalog(None, PLAINTEXT, "c.proto", (str(tmp_path),)) as catalog:
        assert catalog.describe("c.S") == (
            "c.S is a service:\n// Leading of S.\nservice S {\n  // lead m\n"
            "  rpc M ( .c.R ) returns ( .c.R );\n}"
        )
        assert catalog.describe("c.R") == (
            "c.R is a message:\n// block\n// comment\nmessage R {\n  // lead f\n"
            "  string name = 1;\n  // lead g\n  int32 g = 2;\n  map<string, int32> sizes = 3;\n"
            "  // lead E\n  enum E {\n    A = 0;\n  }\n}"
        )
        assert catalog.describe("c.R.name") == "c.R.name is a field:\n// lead f\nstring name = 1;"
        assert catalog.describe("c.S.M") == (
            "c.S.M is a method:\n// lead m\nrpc M ( .c.R ) returns ( .c.R );"
        )
