"""The call contract every layer that makes, runs or counts calls shares (``calls``)."""
