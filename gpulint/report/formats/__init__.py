"""One module per report format, each defining REPORTER (see gpulint/report/registry.py)."""
