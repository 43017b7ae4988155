"""The front ends: the ``grpcbench`` command line (``app``), the commands it calls, and
the pytest plugin. Nothing below imports them."""
