"""The command line: `gpulint scan`, `rules`, `explain`, `init`; options merged with the configuration."""
