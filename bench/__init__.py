"""Benchmarks: alternatives side by side in one run, printed as ratios (docs/benchmarks.md)."""
