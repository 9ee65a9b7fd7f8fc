"""gpulint's built-in rules: one module per rule, each defining RULE.

This package is installed as `gpulint.rules` and registered through the
`gpulint.rules` entry-point group like any third-party rule package.
"""

# The folder sits at the top of the repository, so with the repository on sys.path
# (`python -m pytest`, a script run from the root) it could also be imported as
# `rules`: the same rule modules twice, with two sets of Rule objects. One name only.
if __name__ != "gpulint.rules":
    raise ImportError(f"import the built-in rules as gpulint.rules, not {__name__}")
