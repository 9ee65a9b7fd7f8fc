"""gpulint's built-in rules: one module per rule, each defining RULE.

This package is installed as `gpulint.rules` and registered through the
`gpulint.rules` entry-point group like any third-party rule package.
"""
