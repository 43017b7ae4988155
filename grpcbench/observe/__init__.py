"""What a process tree does while it is measured: CPU, memory, run-queue waits, a
timeline. Above ``base`` only; the results keep its figures."""
