"""`grpcbench list` and `describe` beside real grpcurl, by reflection, -proto and -protoset.

Each case runs grpcurl v1.9 and grpcbench with the same question against the same
schema (ghz's greeter, the route guide, a schema with a map, a nested message
and an enum) and compares what each printed on standard output, and whether each
failed. A case may differ only as ``GRPCURL_DIFFERENCES`` says (rendered into
docs/own-service.md), and a listed difference that is gone fails the case too.
Where grpcurl is absent the suite is skipped, never faked (CI installs it; there
its absence fails).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from grpcbench.cli.listing_commands import GRPCURL_DIFFERENCES
from grpcbench.rpc.schema import compile_proto
from tests.conftest import GRPCBENCH, REPO
from tests.support.any_method_server import any_method_server

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent / "ghz_testdata"
SHAPES = """syntax = "proto3";
package shapes;
// Stores shapes.
service Store {
  // Gets one.
  rpc Get (Query) returns (Shape);
  rpc Add (stream Shape) returns (Query);
}
/* A shape,
   block-commented. */
message Shape {
  // Sizes by name.
  map<string, int32> sizes = 1;
  Kind kind = 2; // a trailing comment, which grpcurl does not print
  // A corner.
  message Corner { /* x */ int32 x = 1; }
  repeated Corner corners = 3;
  enum Kind { ROUND = 0; SQUARE = 1; }
  message Bend { int32 angle = 1; }
  enum Colour { RED = 0; }
  Bend bend = 4;
}
message Query { string name = 1; }
"""


def grpcurl_binary() -> str:
    found = shutil.which("grpcurl")
    if not found:
        if os.environ.get("CI"):
            pytest.fail("grpcurl is not on PATH in CI: .ci/run must install it")
        pytest.skip("grpcurl not installed (go install"
                    " github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4)")  # fmt: skip
    return found


@dataclass(frozen=True)
class Case:
    words: tuple[str, ...]  # grpcurl's verb and its argument: ("describe", "x.Y")
    differences: tuple[tuple[str, str], ...] = ()  # (schema source or "*", difference)

    def differs(self, source: str) -> set[str]:
        return {name for where, name in self.differences if where in ("*", source)}


def _case(*words: str, **differs: str) -> Case:
    """``proto="comments"``: differs so with -proto; ``any="..."``: with every source."""
    return Case(words, tuple(("*" if where == "any" else where, name)
                             for where, name in differs.items()))  # fmt: skip


CASES = [
    _case("list"),
    _case("list", "helloworld.Greeter"),
    _case("list", "routeguide.RouteGuide"),
    _case("list", "shapes.Store"),
    _case("describe", "helloworld.Greeter"),
    _case("describe", "helloworld.Greeter.SayHelloCS"),
    _case("describe", "helloworld.HelloRequest"),
    _case("describe", "routeguide.RouteGuide"),
    _case("describe", "routeguide.Point"),
    _case("describe", "routeguide.RouteGuide.GetFeature"),
    _case("describe", "shapes.Store"),
    _case("describe", "shapes.Shape"),
    _case("describe", "shapes.Shape.Kind"),
    _case("describe", "shapes.Shape.Corner"),
    _case("describe", "helloworld.HelloRequest.name"),
    _case("describe", "shapes.Shape.corners"),
    _case("describe", "shapes.Shape.Corner.x"),
    _case("list", "helloworld.Nope"),
    _case("describe", "helloworld.Nope"),
]
SOURCES = ("reflection", "proto", "protoset")


@pytest.fixture(scope="module")
def schemas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("grpcurl")
    (work / "greeter.proto").write_text((HERE / "greeter.proto").read_text())
    route_guide = (REPO / "examples/route_guide/route_guide.proto").read_text()
    (work / "route_guide.proto").write_text(route_guide)
    (work / "shapes.proto").write_text(SHAPES)
    return work


@pytest.fixture(scope="module")
def server(schemas: Path) -> Any:
    protos = [(str(schemas / name), [str(schemas)])
              for name in ("greeter.proto", "route_guide.proto", "shapes.proto")]  # fmt: skip
    with any_method_server(
        protos, ("helloworld.Greeter", "routeguide.RouteGuide", "shapes.Store")
    ) as (address, _):
        yield address


def _run(argv: list[str], cwd: Path) -> tuple[int, str]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    return done.returncode, done.stdout.strip()


FILES = {"helloworld": "greeter.proto", "routeguide": "route_guide.proto",
         "shapes": "shapes.proto"}  # fmt: skip


def _schema_words(source: str, schemas: Path, grpcurl: bool, case: Case) -> list[str]:
    names = list(FILES.values())
    if source == "proto":  # the one file the question is about (grpcbench takes one)
        package = case.words[1].split(".")[0] if len(case.words) > 1 else "helloworld"
        if grpcurl:
            return ["-import-path", str(schemas), "-proto", FILES[package]]
        return ["--proto", FILES[package], "-i", str(schemas)]
    if source == "protoset":
        path = schemas / "all.protoset"
        if not path.exists():
            from google.protobuf import descriptor_pb2

            bundle = descriptor_pb2.FileDescriptorSet()
            for name in names:
                one = descriptor_pb2.FileDescriptorSet.FromString(
                    compile_proto(str(schemas / name), [str(schemas)])
                )
                known = {f.name for f in bundle.file}
                bundle.file.extend(f for f in one.file if f.name not in known)
            path.write_bytes(bundle.SerializeToString())
        return ["-protoset" if grpcurl else "--protoset", str(path)]
    return []


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", CASES, ids=[" ".join(c.words) for c in CASES])
def test_list_and_describe_print_what_grpcurl_prints(
    case: Case, source: str, schemas: Path, server: str
) -> None:
    grpcurl = grpcurl_binary()
    address = [server] if source == "reflection" else []
    theirs = _run([grpcurl, "-plaintext", *_schema_words(source, schemas, True, case), *address,
                   *case.words], schemas)  # fmt: skip
    ours = _run([*GRPCBENCH, case.words[0], *_schema_words(source, schemas, False, case), *address,
                 *case.words[1:]], schemas)  # fmt: skip
    found = set()
    if (theirs[0] == 0) != (ours[0] == 0):
        found.add("exit-code")
    elif theirs[0] == 0 and theirs[1] != ours[1]:
        found.add("output")
    report = f"grpcurl (exit {theirs[0]}):\n{theirs[1]}\n\ngrpcbench (exit {ours[0]}):\n{ours[1]}"
    # Differs exactly where the case says it does: a difference that is gone fails too.
    assert bool(found) == bool(case.differs(source)), report
    assert case.differs(source) <= set(GRPCURL_DIFFERENCES)
