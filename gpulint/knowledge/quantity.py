"""Kubernetes resource quantities (`2`, `2000m`, `1Gi`, `1e3`) as exact Decimals.

Follows k8s.io/apimachinery `resource.ParseQuantity` and the checks
`ValidateResourceRequirements` makes on extended resources, so that a finding
can quote the API server's own message:

- a quantity is a signed decimal number (`1`, `1.`, `.5`) followed by an
  optional suffix: decimal SI (`n u m k M G T P E`), binary SI (`Ki`..`Ei`) or
  an exponent (`e3`, `E-2`; `E` alone is exa). Surrounding blanks are trimmed
  (the JSON decoder trims them); anything else is rejected.
- YAML/JSON numbers are quantities too; `null` decodes to zero.
- an extended resource must be `>= 0` and whole, where "whole" is tested the
  way the API server tests it: `ceil(q * 1000) % 1000 == 0` (MilliValue).

One deliberate difference: a string without any digit (`+`, `.`, `Ki`), which
the Go parser reads as 0, is treated as invalid here; nobody means 0 by it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from gpulint.lazypattern import lazy
from gpulint.record import record, set_field

if TYPE_CHECKING:
    from decimal import Decimal

# The pattern the API server quotes when it rejects a quantity.
QUANTITY_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

# Number, then a suffix made of suffix letters, an optional sign and digits;
# the suffix is interpreted (or rejected) afterwards, as the Go parser does.
_QUANTITY_RE = lazy(
    r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?P<suffix>[eEinumkKMGTP]*[+-]?[0-9]*)\Z"
)
_EXPONENT_RE = lazy(r"[eE](?P<exp>[+-]?[0-9]+)\Z")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
# Exponents far beyond any resource (the API stores them as int32) are refused
# rather than computed.
_MAX_EXPONENT = 10_000


@functools.lru_cache(maxsize=1)
def _exact() -> Any:
    """The decimal module and a context for exact arithmetic: large enough that no valid
    quantity is ever rounded. Imported on first use: most scans parse no quantity and
    `decimal` is a noticeable part of a small scan's start-up."""
    import decimal

    return decimal, decimal.Context(prec=100_000, Emax=10 * _MAX_EXPONENT, Emin=-10 * _MAX_EXPONENT)


def parse_quantity(value: object) -> Decimal | None:
    """The quantity's exact value, or None when it is not a valid Kubernetes quantity.

    `None` (YAML null) also gives None: callers that care about a key written
    without a value see it through the model, not here.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return _exact()[0].Decimal(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return _exact()[0].Decimal(repr(value))
    if not isinstance(value, str):
        return None
    return _parse_string(value.strip())


def _parse_string(text: str) -> Decimal | None:
    match = _QUANTITY_RE.match(text)
    if match is None:
        return None
    digits_int, digits_frac = match.group("int"), match.group("frac") or ""
    if not digits_int and not digits_frac:
        return None
    decimal, exact = _exact()
    number = decimal.Decimal(f"{match.group('sign')}{digits_int or '0'}.{digits_frac or '0'}")
    suffix = match.group("suffix")
    with decimal.localcontext(exact):
        try:
            if suffix in _DECIMAL:
                return number.scaleb(_DECIMAL[suffix])
            if suffix in _BINARY:
                return number * (2 ** _BINARY[suffix])
            exponent = _EXPONENT_RE.match(suffix)
            if exponent is None:
                return None
            power = int(exponent.group("exp"))
            if abs(power) > _MAX_EXPONENT:
                return None
            return number.scaleb(power)
        except decimal.DecimalException:
            return None


def is_whole(amount: Decimal) -> bool:
    """Whether the API server considers `amount` an integer (`MilliValue() % 1000 == 0`)."""
    decimal, exact = _exact()
    with decimal.localcontext(exact):
        milli = (amount * 1000).to_integral_value(rounding=decimal.ROUND_CEILING)
        return milli % 1000 == 0


def format_amount(amount: Decimal) -> str:
    """A short exact rendering: `2`, `0.5`, `-1`."""
    decimal, exact = _exact()
    with decimal.localcontext(exact):
        if amount == amount.to_integral_value():
            return str(int(amount))
        return format(amount.normalize(), "f")


# --- extended-resource validation --------------------------------------------

MISSING = "missing"          # written without a value (`nvidia.com/gpu:`)
UNPARSABLE = "unparsable"    # not a quantity at all
NEGATIVE = "negative"
FRACTIONAL = "fractional"

# The API server's own words (pkg/apis/core/validation/validation.go and
# apimachinery's resource.ErrFormatWrong), quoted in findings.
MSG_REGEX = f"quantities must match the regular expression '{QUANTITY_PATTERN}'"
MSG_NEGATIVE = "must be greater than or equal to 0"
MSG_INTEGER = "must be an integer"


@record(frozen=True)
class QuantityIssue:
    """What is wrong with an extended resource quantity."""
    __slots__ = ("kind", "amount")
    kind: str                # MISSING, UNPARSABLE, NEGATIVE or FRACTIONAL
    amount: Decimal | None   # the parsed value, when there is one

    def __init__(self, kind: str, amount: Decimal | None) -> None:
        set_field(self, "kind", kind)
        set_field(self, "amount", amount)


def extended_resource_issue(value: object) -> QuantityIssue | None:
    """Why `value` is not a valid quantity for an extended resource, or None when it is.

    Extended resources (every `domain/name` resource) must be whole and not
    negative; checks run in the API server's order (sign first).
    """
    if value is None:
        return QuantityIssue(MISSING, None)
    amount = parse_quantity(value)
    if amount is None:
        return QuantityIssue(UNPARSABLE, None)
    if amount < 0:
        return QuantityIssue(NEGATIVE, amount)
    if not is_whole(amount):
        return QuantityIssue(FRACTIONAL, amount)
    return None
