"""Benchmarks and the labelled/real data loaders they use (not part of the installed package)."""
