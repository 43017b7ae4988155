# ruff: noqa: E501 - ghz's command lines are kept whole, as its documentation prints them
"""The ghz command lines the conformance suite runs: ghz's documented lines and one per flag.

Each ``Line`` is given to ghz v0.120 and, with the binary's name swapped, to
``grpcbench run``, through the recording proxy (tests/support/recording_proxy.py).
``differences`` are the aspects in which what the server received may differ,
each an id of ``grpcbench.run.ghz_promises.DIFFERENCES`` (the table the docs
render): the suite fails when a line differs in another aspect, and also when a
listed difference is gone (the table must stay true).

``ADDR`` is the proxy's address; ``/protos`` the work directory's protos (ghz's
docs use both). ``scaled`` says how a line was shortened to run in CI (ghz's
load examples run 50 s each): counts and step durations, never the flags.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Line:
    text: str
    source: str  # "examples.md:25": ghz's www/docs; "flag --x": one line per usage flag
    differences: frozenset[str] = field(default_factory=frozenset)
    scaled: str = ""
    stdin: str | None = None  # a file of the work directory on standard input
    tls: bool = False  # the proxy speaks TLS (its CA is ca.pem, its name SERVER_NAME)


def _line(text: str, source: str, *differences: str, scaled: str = "", stdin: str | None = None,
          tls: bool = False) -> Line:  # fmt: skip
    return Line(text, source, frozenset(differences), scaled, stdin, tls)


GREETER = "--proto ./greeter.proto --call helloworld.Greeter.SayHello"
JOE = """-d '{"name":"Joe"}'"""
BASE = f"--insecure {GREETER} {JOE} -n 20 -c 2"
# ghz v0.120 panics ("send on closed channel", exit 2) when its run ends before its
# concurrency schedule has stopped changing: a shortened line outlasts the schedule.
NO_PANIC = "; -n outlasts the schedule (ghz panics otherwise)"

# fmt: off
DOCUMENTED = [
    _line(f"--insecure {GREETER} {JOE} ADDR", "examples.md:25"),
    _line(f"--insecure --call helloworld.Greeter.SayHello {JOE} ADDR", "examples.md:38"),
    _line(f"""--insecure {GREETER} {JOE} -m '{{"trace_id":"{{{{.RequestNumber}}}}", "timestamp":"{{{{.TimestampUnix}}}}"}}' ADDR""", "examples.md:50"),
    _line(f"{GREETER} -B ./hello_request_data.bin ADDR", "examples.md:64"),
    _line(f"{GREETER} ADDR", "examples.md:73", stdin="hello_request_data.bin"),
    _line("""--insecure --proto /protos/bytes.proto --call bytes.ImageService.Save -d '{"name":"icon.ico", "data":"AAABAAEAEBAAAAEAIABoBAAAFgAAACgAAAAQ"}' -c 1 -n 1 ADDR""", "examples.md:111"),
    _line(f"""--insecure {GREETER} -d '[{{"name":"Joe"}},{{"name":"Bob"}}]' ADDR""", "examples.md:126"),
    _line(f"{GREETER} {JOE} -n 2000 -c 20 ADDR", "examples.md:139"),
    _line(f"{GREETER} {JOE} -n 2000 -c 20 --connections=10 ADDR", "examples.md:150"),
    _line("""--proto ./greeter.proto --call helloworld.Greeter.SayHelloCS -d '[{"name":"Joe"},{"name":"Kate"},{"name":"Sara"}]' ADDR""", "examples.md:164"),
    _line("""--protoset ./bundle.protoset --call helloworld.Greeter.SayHello -d '{"name":"Bob"}' -n 1000 -c 10 ADDR""", "examples.md:186"),
    _line("--config ./config.json", "examples.md:207"),
    _line("--config ./config.json -c 20 -n 1000", "examples.md:213"),
    _line(f"""--insecure --proto ./protos/greeter.proto --call helloworld.Greeter.SayHello {JOE} -c 5 -n 50 -m '{{"request-id":"{{{{.RequestNumber}}}}", "timestamp":"{{{{.TimestampUnix}}}}"}}' --debug ./logs/debug.json ADDR""", "examples.md:222"),
    _line("""--insecure --proto ./protos/route_guide.proto --call routeguide.RouteGuide.RecordRoute -d '[{ "latitude": 407838351, "longitude": -746143763 }, { "latitude": 419999544, "longitude": -740371136 }, { "latitude": 419611318, "longitude": -746524769 }, { "latitude": 412144655, "longitude": -743949739 }]' -m '{"trace_id":"{{.RequestNumber}}", "timestamp":"{{.TimestampUnixNano}}"}' ADDR""", "examples.md:236"),
    _line("""--insecure --proto ./protos/route_guide.proto --call routeguide.RouteGuide.ListFeatures -d '{"lo":{"latitude":400000000,"longitude":-750000000},"hi":{"latitude":420000000,"longitude":-730000000}}' -m '{"trace_id":"{{.RequestNumber}}", "timestamp":"{{.TimestampUnixNano}}"}' ADDR""", "examples.md:250"),
    _line("""--insecure --proto ./testdata/wrapped.proto --call wrapped.WrappedService.GetMessage -d '"asdf"' ADDR""", "examples.md:282"),
    _line("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -c 10 -n 200 --rps 200 -d '{"name":"{{.WorkerID}}"}' ADDR""", "load.md:11", scaled="-n 10000 -> 200"),
    _line("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -c 10 -n 300 --load-schedule=step --load-start=50 --load-end=150 --load-step=10 --load-step-duration=200ms -d '{"name":"{{.WorkerID}}"}' ADDR""", "load.md:58", scaled="-n 10000 -> 300, 5s -> 200ms"),
    _line("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -c 10 -n 300 --load-schedule=step --load-start=200 --load-step=-10 --load-step-duration=200ms --load-max-duration=2s -d '{"name":"{{.WorkerID}}"}' ADDR""", "load.md:105", scaled="-n 10000 -> 300, 5s -> 200ms, 40s -> 2s"),
    _line("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -c 10 -n 60 --load-schedule=line --load-start=5 --load-step=5 -d '{"name":"{{.WorkerID}}"}' ADDR""", "load.md:152", scaled="-n 10000 -> 60"),
    _line("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -c 10 -n 300 --load-schedule=line --load-start=200 --load-step=-2 --load-end=100 -d '{"name":"{{.WorkerID}}"}' ADDR""", "load.md:199", scaled="-n 10000 -> 300"),
    _line("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -n 500 --rps 200 --concurrency-schedule=step --concurrency-start=5 --concurrency-step=5 --concurrency-end=50 --concurrency-step-duration=200ms -d '{"name":"{{.WorkerID}}"}' ADDR""", "concurrency.md:13", scaled="-n 10000 -> 500, 5s -> 200ms" + NO_PANIC),
    _line("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -n 600 --rps 200 --concurrency-schedule=step --concurrency-start=50 --concurrency-step=-5 --concurrency-step-duration=400ms --concurrency-max-duration=2s -d '{"name":"{{.WorkerID}}"}' ADDR""", "concurrency.md:59", scaled="-n 10000 -> 600, 5s -> 400ms (80 calls a step: each of the 50 workers gets one before the oldest stop), 30s -> 2s" + NO_PANIC),
    _line("""--insecure --async --proto /protos/helloworld.proto --call helloworld.Greeter/SayHello -n 600 --rps 200 --concurrency-schedule=line --concurrency-start=20 --concurrency-step=2 --concurrency-max-duration=1500ms -d '{"name":"{{.WorkerID}}"}' ADDR""", "concurrency.md:107", scaled="-n 10000 -> 600, 30s -> 1500ms (not a whole step: ghz races at a step due at max)" + NO_PANIC),
]

CS = "--insecure --proto ./greeter.proto --call helloworld.Greeter.SayHelloCS"
SPRIG = " ".join([
    '{{upper `joe`}}', '{{lower `ANN`}}', '{{title `hello world`}}', '{{trim `  x  `}}',
    '{{trimPrefix `a` `abc`}}', '{{trimSuffix `c` `abc`}}', '{{repeat 2 `ab`}}',
    '{{substr 1 3 `hello`}}', '{{trunc 2 `hello`}}', '{{replace `l` `L` `hello`}}',
    '{{contains `ell` `hello`}}', '{{hasPrefix `he` `hello`}}', '{{snakecase `HelloWorld`}}',
    '{{kebabcase `HelloWorld`}}', '{{camelcase `hello_world`}}', '{{add 1 2 3}}', '{{sub 5 2}}',
    '{{mul 2 3}}', '{{div 7 2}}', '{{div -7 2}}', '{{mod 7 3}}', '{{mod -7 3}}', '{{max 1 5 3}}',
    '{{min 4 2}}', '{{add1 .RequestNumber}}', '{{.RequestNumber | add 100}}', '{{b64enc `hi`}}',
    '{{sha256sum `x`}}', '{{sha1sum `x`}}', '{{squote `s`}}', '{{cat `a` `b`}}',
    '{{default `d` ``}}', '{{nospace `a b c`}}', '{{.MethodName | lower | repeat 2}}',
    '{{add 1 (mul 2 3)}}', '{{trimAll `-` `--x--`}}', '{{atoi `42`}}', '{{toString 7}}',
    '{{uuidv4 | len}}', '{{print 1 `a` 2}}',
])
FEATURES = """-d '{"lo":{"latitude":400000000,"longitude":-750000000},"hi":{"latitude":420000000,"longitude":-730000000}}'"""
NAMES = """-d '[{"name":"Joe"},{"name":"Kate"},{"name":"Sara"}]'"""
TLS_BASE = f"{GREETER} {JOE} -n 20 -c 2 --cacert ./ca.pem --cname echo.bench.test"

PER_FLAG = [
    _line(f"--insecure --protoset ./bundle.protoset --call helloworld.Greeter.SayHello {JOE} -n 20 -c 2 ADDR", "flag --protoset"),
    _line(f"--insecure --proto greeter.proto -i ./protos --call helloworld.Greeter.SayHello {JOE} -n 20 -c 2 ADDR", "flag -i"),
    _line(f"{TLS_BASE} ADDR", "flag --cacert --cname", tls=True),
    _line(f"{GREETER} {JOE} -n 20 -c 2 --skipTLS ADDR", "flag --skipTLS", "skiptls-name", tls=True),
    _line(f"{BASE} --authority example.test ADDR", "flag --authority"),
    _line(f"{BASE} --async ADDR", "flag --async"),
    _line(f"{BASE} --rps 100 ADDR", "flag -r"),
    _line(f"--insecure {GREETER} {JOE} -n 40 -c 4 ADDR", "flag -c -n"),
    _line(f"{BASE} -t 3s ADDR", "flag -t"),
    _line("""--insecure --proto ./protos/unserved.proto --call nothere.Nope.Call -d '{"name":"x"}' -n 20 -c 2 -O json ADDR""", "every call fails", "exit-on-failure"),
    _line(f"--insecure {GREETER} {JOE} -c 2 -z 500ms ADDR", "flag -z"),
    _line(f"--insecure {GREETER} {JOE} -c 2 -n 100000 -x 500ms ADDR", "flag -x"),
    _line(f"--insecure {GREETER} {JOE} -c 2 -z 500ms --duration-stop ignore ADDR", "flag --duration-stop"),
    _line(f"--insecure {GREETER} {JOE} -c 2 -z 500ms --duration-stop close ADDR", "flag --duration-stop close"),
    _line(f"--insecure {GREETER} -D ./data.json -n 20 -c 2 ADDR", "flag -D"),
    _line(f"--insecure {GREETER} -b -n 20 -c 2 ADDR", "flag -b", stdin="hello_request_data.bin"),
    _line(f"--insecure {GREETER} -B ./hello_requests.bin -n 20 -c 2 ADDR", "flag -B, delimited"),
    _line(f"{CS} -B ./hello_requests.bin -n 6 -c 2 ADDR", "flag -B, delimited stream"),
    _line(f"""{BASE} -m '{{"tenant":"t1","n":"{{{{.RequestNumber}}}}"}}' ADDR""", "flag -m"),
    _line(f"{BASE} -M ./metadata.json ADDR", "flag -M"),
    _line(f"{CS} {NAMES} -n 10 -c 2 --stream-interval 10ms ADDR", "flag --stream-interval"),
    _line(f"{CS} {NAMES} -n 4 -c 2 --stream-call-duration 100ms --stream-interval 20ms ADDR", "flag --stream-call-duration"),
    _line(f"{CS} {NAMES} -n 10 -c 2 --stream-call-count 2 ADDR", "flag --stream-call-count"),
    _line(f"""{CS} -d '[{{"name":"{{{{.TimestampUnixNano}}}}"}}]' -n 10 -c 2 --stream-call-count 3 --stream-dynamic-messages ADDR""", "flag --stream-dynamic-messages"),
    _line(f"""{CS} -d '[{{"name":"{{{{.TimestampUnixNano}}}}"}}]' -n 10 -c 2 --stream-call-count 3 ADDR""", "flag --stream-call-count, templated"),
    _line(f"""--insecure --call helloworld.Greeter.SayHello {JOE} -n 20 -c 2 --reflect-metadata '{{"tenant":"t1"}}' ADDR""", "flag --reflect-metadata"),
    _line(f"{BASE} --skipFirst 5 ADDR", "flag --skipFirst"),
    _line(f"{BASE} --count-errors ADDR", "flag --count-errors"),
    _line(f"--insecure {GREETER} {JOE} -n 40 -c 4 --connections 2 ADDR", "flag --connections"),
    _line(f"{BASE} --connect-timeout 3s ADDR", "flag --connect-timeout"),
    _line(f"{BASE} --keepalive 30s ADDR", "flag --keepalive"),
    _line(f"""{BASE} --name run1 --tags '{{"env":"ci"}}' ADDR""", "flag --name --tags"),
    _line(f"""{BASE} --name run1 --tags '{{"zeta":"1","alpha":"2"}}' -O influx-summary ADDR""", "flag --tags, influx"),
    _line(f"{BASE} --cpus 1 ADDR", "flag --cpus"),
    _line(f"--insecure {GREETER} {JOE} -n 40 -c 4 --cpus 2 ADDR", "flag --cpus 2", "cpus-connections"),
    _line(f"{BASE} --debug ./logs/debug.json ADDR", "flag --debug"),
    _line(f"{BASE} -e ADDR", "flag -e"),
    _line(f"{BASE} --lb-strategy round_robin ADDR", "flag --lb-strategy"),
    _line(f"{BASE} --lb-strategy round_robin dns:///ADDR", "flag --lb-strategy, dns:///"),
    _line(f"{BASE} --max-recv-message-size 1MB ADDR", "flag --max-recv-message-size"),
    _line(f"{BASE} --max-send-message-size 1MB ADDR", "flag --max-send-message-size"),
    _line(f"""--insecure {GREETER} -d '{{"name":"{{{{.WorkerID}}}}"}}' -n 20 -c 2 --disable-template-functions ADDR""", "flag --disable-template-functions"),
    _line(f"""--insecure {GREETER} -d '{{"name":"{{{{.RequestNumber}}}}"}}' -n 20 -c 2 --disable-template-data ADDR""", "flag --disable-template-data"),
    *[
        _line(f"{BASE} -O {name} ADDR", f"flag -O {name}")
        for name in (
            "summary",
            "csv",
            "json",
            "pretty",
            "influx-summary",
            "influx-details",
            "prometheus",
        )
    ],
    _line(f"{BASE} -O json -o ./out.json ADDR", "flag -o"),
    # A server stream cut by the client: after N replies, or after a time (ghz cancels).
    _line(f"""--insecure --proto ./protos/route_guide.proto --call routeguide.RouteGuide.ListFeatures {FEATURES} -n 10 -c 2 --stream-call-count 2 ADDR""", "flag --stream-call-count, server stream"),
    _line(f"""--insecure --proto ./protos/route_guide.proto --call routeguide.RouteGuide.ListFeatures {FEATURES} -n 10 -c 2 --stream-call-duration 50ms ADDR""", "flag --stream-call-duration, server stream"),
    # Sprig's functions in Go's action syntax: literals, fields, parentheses, pipelines.
    _line(f"""--insecure {GREETER} -d '{{"name":"{SPRIG}"}}' -n 6 -c 1 ADDR""", "sprig functions"),
    _line(f"""--insecure {GREETER} -d '{{"name":"{{{{randInt 1 9}}}}-{{{{now | unixEpoch}}}}-{{{{randAlpha 4 | upper}}}}"}}' -n 6 -c 1 ADDR""", "sprig functions, random"),
    # Two of a kind: ghz uses one (its fromConfig and requester), so does a ghz line here.
    _line(f"--insecure {GREETER} {JOE} -D ./data.json -n 20 -c 2 ADDR", "flags -d -D"),
    _line(f"--insecure --proto ./greeter.proto --protoset ./bundle.protoset --call helloworld.Greeter.SayHello {JOE} -n 20 -c 2 ADDR", "flags --proto --protoset"),
    _line(f"--insecure {GREETER} {JOE} -c 2 -n 10 -z 500ms ADDR", "flags -z -n"),
    _line("--config ./config.yaml", "flag --config (YAML)"),
]

# fmt: on

LINES = DOCUMENTED + PER_FLAG
