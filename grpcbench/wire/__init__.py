"""grpcbench's own gRPC client transport: HTTP/2 frames on an asyncio ``Protocol``.

Why it exists: a grpc.aio client spends 40-160 us of CPU per call, as much as
the Python servers it measures, so the instrument would describe itself. This
transport caches each connection's request header blocks (HPACK with the
dynamic table, as grpc's clients send them) and a repeated unary request's whole
frames, parses replies with one ``struct`` call per frame in one loop per socket
read (the common frames handled in that loop, a unary reply's DATA frame and
trailers at once: ``unary_replies``) and caches decoded header blocks,
for a few us per call (``nox -s wire_replay`` measures it without a server).

- ``frames``: frame layout, the splitter and frame builders (pure, fuzzed);
- ``status``: gRPC status codes, RST_STREAM and HTTP mappings, grpc-timeout;
- ``headers``: request encoding per connection and reply decoding (hpack), cached;
- ``stream``: one call and its state machine (IDLE, OPEN, HALF_CLOSED_LOCAL, CLOSED);
- ``connection``: one HTTP/2 connection, what the frames do to its calls; one
  class put together from ``calls_out``, ``replies_in`` and ``control_in`` over the
  state in ``connection_core``; its other concerns one module each: ``control``
  (control frames' checks), ``flow_control`` (windows), ``deadlines``,
  ``keepalive``, ``messages`` (reply messages), ``header_blocks`` (CONTINUATION),
  ``unary_replies`` (the rest of a unary reply in one read) and ``writer``
  (batched writes);
- ``channel``: connections to one target, plus the grpc.aio-shaped API that
  every workload binds to (``unary_unary`` ... ``stream_stream``).

The callback closed and open loops that drive it for plain unary workloads
live with the other loops, in ``load.callback_loops``; this package is the
transport only and imports nothing from ``load`` (``tests/test_architecture.py``).

grpc.aio stays as ``--client-stack grpcio``: the reference every result is
checked against (``tests/test_wire_differential.py``).
"""
