"""Layer 0, foundations: errors, parsing, declarations, secrets, units and the launching
of child processes. Imports nothing else of grpcbench, so anything may import it."""
