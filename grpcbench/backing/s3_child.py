"""Entry point of the embedded S3: moto's server on 127.0.0.1, a free port.

Prints ``READY {"port": N}`` once it listens; stops on SIGTERM.
"""

from __future__ import annotations

import signal
import threading

from grpcbench.base.child_setup import announce_ready, setup_child


def main() -> None:
    setup_child(None)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    announce_ready(server.get_host_and_port()[1])
    stop.wait()
    server.stop()


if __name__ == "__main__":
    main()
