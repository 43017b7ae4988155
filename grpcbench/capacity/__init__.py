"""``grpcbench capacity``: the highest open-loop rate each server kind serves within an SLO.

``slo`` parses and checks the objectives, ``search`` chooses the next rate to
probe (pure, no I/O), ``probe`` judges one measured probe, ``runner`` drives
the probes on each server kind, ``record`` saves and loads the results.
"""
