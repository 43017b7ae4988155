"""MongoDB for the save scenario: mongo-java-server embedded, or a real MongoDB.

``mongo_uri`` unset: grpcbench runs mongo-java-server's in-memory backend
(from Maven Central, fetched once with Maven into ~/.cache/grpcbench) with the
JDK. It speaks wire version 8 (MongoDB 4.2): PyMongo 4.20 refuses it, so the
embedded case needs PyMongo < 4.20 (the ``io`` extra pins 4.15.4, tested).
"""

from __future__ import annotations

import os
import re
import shutil
from contextlib import ExitStack
from importlib.metadata import version
from pathlib import Path
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.preparation import current
from grpcbench.base.processes import ready_process, run_to_completion

MONGO_JAVA_SERVER = "1.47.0"
DATABASE = "grpcbench"
COLLECTION = "objects"
POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>grpcbench</groupId><artifactId>embedded-mongo</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>de.bwaldvogel</groupId>
      <artifactId>mongo-java-server-memory-backend</artifactId><version>{version}</version>
    </dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId>
      <version>2.0.17</version></dependency>
  </dependencies>
</project>
"""


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "grpcbench" / f"mongo-java-server-{MONGO_JAVA_SERVER}"


def java_binary() -> str:
    explicit = os.environ.get("GRPCBENCH_JAVA")
    found = explicit or shutil.which("java")
    if not found or not Path(found).exists():
        raise UsageError(
            "the embedded MongoDB needs Java (a JDK 11 or newer) on PATH (or GRPCBENCH_JAVA);"
            " install one or give --mongo-uri"
        )
    return found


def fetch_jars() -> Path:
    """mongo-java-server and its dependencies, downloaded once with Maven."""
    directory = cache_dir()
    lib = directory / "lib"
    if lib.is_dir() and any(lib.glob("mongo-java-server-core-*.jar")):
        return lib
    maven = shutil.which("mvn")
    if not maven:
        raise UsageError(
            "the embedded MongoDB is fetched from Maven Central with Maven (mvn), which is"
            " not on PATH; install Maven or give --mongo-uri"
        )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pom.xml").write_text(POM.format(version=MONGO_JAVA_SERVER))
    result = run_to_completion(
        [maven, "-q", "-B", "dependency:copy-dependencies", "-DoutputDirectory=lib"],
        cwd=str(directory), timeout_s=600, supervisor=current(),
    )  # fmt: skip
    if result.returncode != 0:
        output = result.stdout.decode(errors="replace")
        tail = "\n".join(output.strip().splitlines()[-5:])
        raise UsageError(f"could not fetch mongo-java-server with Maven:\n{tail}")
    return lib


def check_pymongo_for_embedded() -> None:
    major, minor = (int(part) for part in version("pymongo").split(".")[:2])
    if (major, minor) >= (4, 20):
        raise UsageError(
            f"PyMongo {version('pymongo')} refuses the embedded MongoDB (wire version 8,"
            " MongoDB 4.2 level): install pymongo==4.15.4 (the io extra does) or give --mongo-uri"
        )


def check_mongo(uri: str) -> None:
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    try:
        client: Any = MongoClient(uri, serverSelectionTimeoutMS=3000)
        with client:
            client.admin.command("ping")
    except PyMongoError as error:
        # pymongo appends its whole topology description; the first clause says why.
        reason = re.split(r", Timeout: |, Topology Description: ", str(error))[0]
        raise UsageError(f"cannot reach MongoDB at {uri}: {reason.splitlines()[0]}") from None


def reset_collection(params: dict[str, Any]) -> None:
    """Each server kind starts from an empty collection."""
    from pymongo import MongoClient

    client: Any = MongoClient(params["mongo_uri"], serverSelectionTimeoutMS=3000)
    with client:
        client[DATABASE][COLLECTION].drop()


def provide_mongo(params: dict[str, Any], stack: ExitStack) -> dict[str, Any]:
    if not params.get("mongo_uri"):
        check_pymongo_for_embedded()
        java = java_binary()
        lib = fetch_jars()
        source = Path(__file__).with_name("EmbeddedMongo.java")
        argv = [java, "-cp", f"{lib}/*", str(source), "0"]
        port = stack.enter_context(
            ready_process("MongoDB (mongo-java-server)", argv, current(), role="MongoDB", gil=False)
        )
        params = {**params, "mongo_uri": f"mongodb://127.0.0.1:{port}/"}
    check_mongo(params["mongo_uri"])
    return params
