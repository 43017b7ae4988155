"""The defaults of a run's settings.

The command line shows these in its help, the scenario files fall back to
them, and the frozen option objects use them. The load settings declare
everything else about themselves once, in ``plan.LoadSettings`` (option, help,
JSON name, check; see ``settings``); the other run options keep their help in
``cli``.
"""

from __future__ import annotations

SCENARIO = "hello"
# The server kinds a scenario compares when it names none.
SERVERS: tuple[str, ...] = (
    "grpcio:workers=1",
    "grpcio:workers=10",
    "grpclib",
    "grpclib+uvloop",
    "grpcio-aio",
    "grpcio-aio+uvloop",
)
CONCURRENCY: tuple[int, ...] = (2, 10, 25, 50)
REQUESTS = 5000  # measured calls per level (a scenario file may set its own)
# Discarded calls (or a time, "2s") before a server's first level; later levels on the
# same server discard at most WARM_SERVER_CALLS_PER_USER calls per user (model.warmup).
WARMUP = "500"
WARM_SERVER_CALLS_PER_USER = 2
TIMEOUT = "20s"  # per-call deadline
MAX_LEVEL = "300s"  # hard limit of one level's measured phase
LOAD = "builtin"  # load driver(s)
CONNECTIONS = "auto"  # client connection strategy
ARRIVALS = "uniform"  # open-loop arrival process
MAX_IN_FLIGHT = 1000  # open loop: most calls in flight at once
# The largest reply message a client takes (--max-recv-message-size): grpc's own
# default, and so ghz's; 0 lifts it. A server streaming one endless message must
# end the call ResourceExhausted, not grow the generator without bound.
MAX_RECV_BYTES = 4 * 1024 * 1024
# User code that holds a generator's loop this long, or grows it past this, ends its
# level (load.loop_watchdog): well past what the built-in client ever takes.
STALL_LIMIT = "10s"
GENERATOR_MEMORY_LIMIT = 4 * 1024**3
CLIENT_PROCESSES = "auto"  # built-in generator processes per level
SAMPLE_INTERVAL = "100ms"  # resource timelines: CPU % and RSS sampled this often ("off": none)
CLIENT_LOOP = "uvloop"  # the built-in generator's event loop (uvloop or asyncio)
# The built-in generator's gRPC client (rpc.client_stacks): grpcbench's own HTTP/2 frames.
CLIENT_STACK = "wire"
REPEAT = 1
PORT = 0  # 0 = any free port
START_TIMEOUT = "30s"  # a server grpcbench starts must be SERVING within this
START_TIMEOUT_S = 30.0

# grpcbench capacity: the search's own defaults.
CAPACITY_MAX_ERROR_RATE = 0.001  # a passing probe's error budget
CAPACITY_PRECISION = "5%"  # bracket width that ends the search
CAPACITY_PROBE_DURATION = "3s"
CAPACITY_PROBE_WARMUP = "1s"
CAPACITY_MAX_PROBES = 12  # per server kind and SLO
CAPACITY_CONFIRMATIONS = 3  # fresh-server runs at the capacity found
