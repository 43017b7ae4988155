"""What grpcbench promises about ghz's command line, as tables the docs render and
the tests hold it to: the flags it takes and what each means here (``ACCEPTED``),
the flags it refuses and why (``REFUSED``), and what a server sees differ between
ghz and grpcbench given one line (``DIFFERENCES``, which the conformance suite in
tests/conformance allows and nothing else). ``ghz_compat`` acts on them.
"""

from __future__ import annotations

# ghz flag -> what it means here (the README lists these).
ACCEPTED: dict[str, str] = {
    "--proto, --protoset, --call, -i/--import-paths": "the same (a --proto path is also"
    " looked up under the import paths, as ghz does; given both, --proto is used, as by"
    " ghz)",
    "-d/--data, -D/--data-file, -m/--metadata, -M/--metadata-file": "the same, template"
    " actions included; a key gRPC reserves (te, content-type, user-agent, grpc-timeout,"
    " grpc-encoding, grpc-status...) or HTTP/2 forbids (host, connection...) is refused by"
    " name, where ghz drops it unsent; given -d and -D, -D is used (-d @, standard input,"
    " over -D), as by ghz",
    "--insecure, --cacert, --cert, --key, --cname, --skipTLS": "the same",
    "-c/--concurrency, -n/--total, -z/--duration, -t/--timeout": "the same (-c also takes a"
    " list of levels; -z with -n: -z, as in ghz)",
    "-x/--max-duration": "--duration, and -n is ignored: what ghz's binary does (its docs"
    " say -n is respected)",
    "-r/--rps": "--rate (open loop); with -c, -c caps the calls in flight",
    "--load-schedule, --load-start, --load-step, --load-end, --load-step-duration,"
    " --load-max-duration": "the same, ghz's pacer exactly (--rate-schedule ghz:...): the"
    " rate steps (line: every second by the slope) and then holds at --load-end, or"
    " from --load-max-duration at the rate reached, until -n or -z ends the level; with"
    " -c, -c caps the calls in flight",
    "--concurrency-schedule, --concurrency-start, --concurrency-step, --concurrency-end,"
    " --concurrency-step-duration, --concurrency-max-duration": "the same with --rps or"
    " --load-schedule, ghz's worker ticker exactly (--worker-schedule ghz:...): the"
    " workers change in steps, the oldest stopped first; each call carries the"
    " {{.WorkerID}} of a working worker, in turn, and the working workers cap the calls"
    " in flight; -c is then ignored, as ghz ignores it. Without a rate (ghz: workers"
    " calling as fast as they can) it is refused",
    "--connections": "the same: N connections, calls spread round-robin",
    "--skipFirst": "--warmup N: the first N of -n's calls are not counted (-n 300"
    " --skipFirst 100: 300 calls, 200 reported)",
    "--count-errors": "always on: failed calls count in every figure",
    "--stream-call-count": "--stream-messages; on a server stream the client cancels the"
    " call after N replies, as ghz does, and counts it OK (ghz counts it Canceled)",
    "--stream-dynamic-messages": "the same: each message of a client or bidi stream is"
    " rendered as it is sent (the call's worker and request number; a new timestamp,"
    " UUID and random values); refused, as ghz fails, with -b/-B or with data that has"
    " no template action",
    "--stream-interval, --stream-call-duration": (
        "the same, for client and bidi streams (--stream-call-duration on a server stream:"
        " the client cancels the call then, counted OK, where ghz counts it Canceled);"
        " --stream-interval keeps a pacer from the"
        " stream's start (message n is due at n × interval), so a stream the server holds"
        " back falls behind it and the table shows each message's send lag, where ghz"
        " sleeps the interval after each send"
    ),
    "-b/--binary, -B/--binary-file": "the same: a serialized request (from standard input"
    " or a file), checked against the schema; length-delimited messages are a list,"
    " cycled call by call or a client stream's messages, as ghz reads them; used over"
    " -d/-D, as by ghz",
    "--reflect-metadata": "the same: metadata on the reflection requests",
    "--duration-stop": "the same: at the end of -z (or -x), close cancels the calls in"
    " flight, each counted Cancelled; ignore cancels them uncounted; wait waits for them."
    " Without it grpcbench waits: ghz's default, close, closes its connections while its"
    " workers finish their calls, so against a fast server none is cancelled (a ghz -z"
    " line measured here: 0 Cancelled), against a slow one some are",
    "--lb-strategy": "pick_first and round_robin, where they mean the same: one address"
    " (HOST:PORT, which ghz dials as it is, or a dns:/// name with one address); round"
    " robin over the several addresses of a dns:/// name is refused (grpcbench connects"
    " to one)",
    "dns:///HOST:PORT, passthrough:///HOST:PORT": "the same: gRPC's name syntax, resolved by"
    " the system's resolver",
    "--cpus": "--client-processes: generator processes (ghz: Go threads)",
    "--connect-timeout": "the same (default 10s)",
    "--config": "the same: a JSON, TOML or YAML file of ghz's options (YAML with the"
    " yaml extra); the command line wins",
    "--authority, --keepalive, -e/--enable-compression": "the same, on both client stacks",
    "--max-recv-message-size, --max-send-message-size": "the same: a larger message ends its"
    " call ResourceExhausted, which the level counts (the pre-flight call lets it"
    " through); a level whose every call failed exits 4 unless --expect-status names it."
    " Replies are capped at 4 MiB unless given, as grpc's and ghz's are (0: no cap)",
    "--name, --tags": "recorded in the results and shown in the header",
    "-O/--format, -o/--output": "ghz's summary, csv, json, pretty, influx-summary,"
    " influx-details and prometheus, as ghz prints them, to -o or (without -o, or -o -)"
    " to standard output, the tables then going to standard error; html is grpcbench's"
    " report; without -O, -o writes grpcbench's JSON",
    "--debug": "a log of the run, line by line, to the file (servers, levels, progress"
    " each second, statuses, errors, warnings), not ghz's zap log",
    "--disable-template-functions, --disable-template-data": "the same: -d and -m without"
    " their template functions (a function is refused), or sent as they are",
    "--async": "accepted: with --rps the open loop never waits for replies, as ghz's;"
    " without --rps grpcbench keeps -c calls in flight, where ghz's async workers start"
    " a call without waiting for the last, so ghz has as many in flight as replies lag"
    " behind (over 1,000 were measured against a Python server)",
    "HOST:PORT (last argument)": "the same as --target",
}
REFUSED: dict[str, str] = {}
# What a server sees differ between ghz and grpcbench given one ghz command line:
# the conformance suite (tests/conformance) runs ghz's documented lines and one line
# per flag through both, records what the server received, and allows a line only
# the differences it lists from this table (docs/own-service.md renders it).
DIFFERENCES: dict[str, str] = {
    "skiptls-name": "--skipTLS: grpcbench fetches the server's certificate first (one"
    " more connection) and then sends its name as the TLS server name (SNI) and"
    " :authority; ghz sends no SNI and HOST:PORT as :authority",
    "exit-on-failure": "every call failed (a wrong method, a deadline no call meets, no"
    " server): grpcbench measures the calls as ghz does and writes -O/-o's report of the"
    " failures, says the statuses in one line, then exits 4 (a level that measured only"
    " failures is not a success); ghz exits 0",
    "cpus-connections": "--cpus N: N connections, one per generator process (a"
    " connection cannot be shared between processes); ghz's N threads share one",
}
