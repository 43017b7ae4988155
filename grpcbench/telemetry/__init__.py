"""Live telemetry: what a run measures, seen from outside while it runs (Prometheus)."""
