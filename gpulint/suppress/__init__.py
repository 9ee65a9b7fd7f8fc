"""Suppressions: why a finding is not reported (inline comments, annotations, configuration, system components, baseline)."""
