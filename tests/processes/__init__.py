"""Tests that start processes: fresh interpreters (a cold start, the variables Powertools reads at import,
mypy over a probe), the command in a terminal, the package built and installed; `make processes`."""
