"""Backing services some scenarios need (S3, MongoDB, PostgreSQL), embedded by default;
a user's own MySQL (``--database mysql://``) is only filled, never started.

Each is started once per run in its own process on 127.0.0.1, dies with
grpcbench (PR_SET_PDEATHSIG), and is stopped at the end of the run, also on
errors and Ctrl-C (the runner's exit stack).
"""
