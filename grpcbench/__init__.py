"""grpcbench: benchmark Python gRPC servers side by side.

The package is split the way pyperf and locust split theirs: a thin CLI, a
runner that orchestrates, server kinds and load drivers that run in their own
processes, and versioned results that every exporter reads.
"""

__version__ = "0.1.0"
