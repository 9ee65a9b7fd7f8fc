"""Kubernetes resource quantities (`2`, `2000m`, `1Gi`, `1e3`) as exact Decimals.

Grammar from k8s.io/apimachinery `resource.Quantity`: a signed decimal number
followed by an optional binary (Ki..Ei), decimal (n, u, m, k, M..E) or
exponent (e3, E-2) suffix.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_QUANTITY_RE = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?\Z"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
            "P": Decimal("1e15"), "E": Decimal("1e18")}


def parse_quantity(value: object) -> Decimal | None:
    """The quantity's value, or None when it is not a valid Kubernetes quantity."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return Decimal(repr(value))
    if not isinstance(value, str):
        return None
    match = _QUANTITY_RE.match(value.strip()) if value.strip() == value else None
    if match is None:
        return None
    try:
        number = Decimal(match.group("number"))
    except InvalidOperation:
        return None
    suffix = match.group("suffix") or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    return number * (Decimal(10) ** int(suffix[1:]))
