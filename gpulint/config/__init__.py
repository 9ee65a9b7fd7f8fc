"""Configuration: `.gpulint.yaml` / `[tool.gpulint]`, validated, and rule selection."""
