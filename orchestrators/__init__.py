"""Orchestrators: timers, fan-out and fan-in over the library. Deterministic, no I/O."""
