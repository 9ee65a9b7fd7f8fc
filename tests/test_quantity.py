"""The Kubernetes quantity parser and the extended-resource checks built on it."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulint.knowledge.quantity import (
    FRACTIONAL,
    MISSING,
    NEGATIVE,
    UNPARSABLE,
    extended_resource_issue,
    format_amount,
    is_whole,
    parse_quantity,
)


@pytest.mark.parametrize("text, expected", [
    ("0", "0"),
    ("2", "2"),
    ("+2", "2"),
    ("-1", "-1"),
    ("007", "7"),
    ("1.", "1"),
    (".5", "0.5"),
    ("0.5", "0.5"),
    ("2000m", "2"),
    ("500m", "0.5"),
    ("1n", "0.000000001"),
    ("1u", "0.000001"),
    ("1k", "1000"),
    ("1M", "1000000"),
    ("1G", "1000000000"),
    ("1T", "1000000000000"),
    ("1P", "1000000000000000"),
    ("1E", "1000000000000000000"),     # E alone is exa ...
    ("1E3", "1000"),                   # ... followed by digits an exponent
    ("1e3", "1000"),
    ("1e+3", "1000"),
    ("1e-1", "0.1"),
    ("1e0", "1"),
    ("1Ki", "1024"),
    ("1.5Ki", "1536"),
    ("1Mi", "1048576"),
    ("1Gi", "1073741824"),
    ("1Ti", str(2**40)),
    ("1Pi", str(2**50)),
    ("1Ei", str(2**60)),
    ("1.5Gi", str(3 * 2**29)),
    (" 3 ", "3"),                      # the JSON decoder trims blanks
    ("123456789012345678901234567890", "123456789012345678901234567890"),  # never rounded
    ("0.000000000000000000000000000001", "1E-30"),
])
def test_valid_strings(text: str, expected: str) -> None:
    assert parse_quantity(text) == Decimal(expected)


@pytest.mark.parametrize("text", [
    "", " ", "one", "1 GPU", "1.5.0", "1ki", "1K", "1e", "1e+", "1E+", "1i", "1Ki5", "1m5", "1+5",
    "1KiB", "--1", "+-1", "0x10", "1,5", "1_000", "∞", "Ki", "+", "-", ".", "e3", "1e3.5", "1e99999999",
])
def test_invalid_strings(text: str) -> None:
    assert parse_quantity(text) is None


@pytest.mark.parametrize("value, expected", [
    (2, Decimal(2)),
    (-1, Decimal(-1)),
    (0.5, Decimal("0.5")),
    (1.0, Decimal(1)),
    (1e3, Decimal(1000)),
    (10**30, Decimal(10**30)),
])
def test_yaml_numbers(value: object, expected: Decimal) -> None:
    assert parse_quantity(value) == expected


@pytest.mark.parametrize("value", [None, True, False, float("nan"), float("inf"), float("-inf"), [1], {"a": 1}])
def test_non_quantities(value: object) -> None:
    assert parse_quantity(value) is None


@pytest.mark.parametrize("text, whole", [
    ("1", True), ("2000m", True), ("0", True), ("1.5", False), ("500m", False), ("1001m", False),
    ("1.0001", False),
    # The API server tests MilliValue() = ceil(q * 1000) % 1000: sub-milli digits round up.
    ("0.9999", True), ("1.0000001", False),
])
def test_is_whole_follows_milli_value(text: str, whole: bool) -> None:
    amount = parse_quantity(text)
    assert amount is not None
    assert is_whole(amount) is whole


@pytest.mark.parametrize("value, kind", [
    (None, MISSING),
    ("", UNPARSABLE),
    ("one", UNPARSABLE),
    (True, UNPARSABLE),
    (-1, NEGATIVE),
    ("-0.5", NEGATIVE),                # the sign is checked first, as the API server does
    (0.5, FRACTIONAL),
    ("0.5", FRACTIONAL),
    ("500m", FRACTIONAL),
    ("1e-1", FRACTIONAL),
])
def test_extended_resource_issues(value: object, kind: str) -> None:
    issue = extended_resource_issue(value)
    assert issue is not None and issue.kind == kind


@pytest.mark.parametrize("value", [0, 1, "2", "2000m", "1e0", 1.0, "+1", " 1 ", "1k", "1Ki"])
def test_valid_extended_resource_quantities(value: object) -> None:
    assert extended_resource_issue(value) is None


def test_issue_carries_the_amount() -> None:
    issue = extended_resource_issue("500m")
    assert issue is not None and issue.amount == Decimal("0.5")


@pytest.mark.parametrize("amount, text", [("2", "2"), ("2.000", "2"), ("0.5", "0.5"), ("-1", "-1"),
                                          ("1E+3", "1000"), ("1E-9", "0.000000001")])
def test_format_amount(amount: str, text: str) -> None:
    assert format_amount(Decimal(amount)) == text


@given(st.integers(min_value=-10**20, max_value=10**20))
def test_integers_round_trip_in_every_form(n: int) -> None:
    assert parse_quantity(n) == n
    assert parse_quantity(str(n)) == n
    assert parse_quantity(f"{n}000m") == n
    assert parse_quantity(f"{n}e0") == n


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["k", "M", "G", "Ki", "Mi", "Gi", "m", "u", "n"]))
def test_suffixes_scale_exactly(n: int, suffix: str) -> None:
    scale = {"k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9), "Ki": Decimal(2**10),
             "Mi": Decimal(2**20), "Gi": Decimal(2**30), "m": Decimal("1e-3"), "u": Decimal("1e-6"),
             "n": Decimal("1e-9")}[suffix]
    assert parse_quantity(f"{n}{suffix}") == n * scale


@given(st.text(max_size=12))
def test_never_raises(text: str) -> None:
    parse_quantity(text)
    extended_resource_issue(text)
