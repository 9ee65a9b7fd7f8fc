"""Shared knowledge rules agree on: GPUs, host paths, resources and quantities, commands, environment values."""
