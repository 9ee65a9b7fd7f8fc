"""Fixes: a rule's edits by document path turned into text edits of the file the user wrote
(resolve.py; for a kustomization's build, in the resource or patch file that writes the value:
kustomize.py), applied in rounds until nothing changes (rounds.py), shown as a unified diff
(diff.py) or written back in place (files.py).

Text outside the edited ranges is never touched: no document is serialised again, so
comments, quoting, key order, flow or block style, indentation, line breaks, byte-order
marks and other documents stay byte for byte what they were.
"""
