"""``run --profile``: where each server's CPU went, sampled with py-spy during the
measured phase (``pyspy`` records, ``stacks`` reads the collapsed stacks)."""
