"""The panels of `grpcbench run --help`, named once: declarations anywhere (load
settings, the call's options, TLS, ghz's flags) put their option in one of these."""

WHAT_TO_RUN = "What to run"
LOAD_MODEL = "Load model"
TARGET = "Target"
OUTPUT = "Output"
PLACEMENT = "Placement"
BACKING_SERVICES = "Backing services"
CALL = "Any method (ghz's options)"
TLS = "TLS (any option switches it on)"
GHZ = "ghz's own flags (see docs: your own service)"
CAPACITY = "Capacity search"
