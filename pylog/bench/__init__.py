"""Benchmarks run by `scripts/bench <name> ...`: each is a module `pylog.bench.<name>` with a `main(argv)`."""
