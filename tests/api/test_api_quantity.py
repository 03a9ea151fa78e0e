from fractions import Fraction

import pytest

from kschedfw.api import (milli_value, parse_quantity, parse_resource_list,
                          resource_amount, value)
from kschedfw.api.field import ManifestError

GI = 1024 ** 3


@pytest.mark.parametrize("text, exact, milli, whole", [
    pytest.param("100m", Fraction(1, 10), 100, 1, id="millicores"),
    pytest.param("1", 1, 1000, 1, id="plain-int"),
    pytest.param("0.5", Fraction(1, 2), 500, 1, id="fraction"),
    pytest.param(".5", Fraction(1, 2), 500, 1, id="leading-dot"),
    pytest.param("1.", 1, 1000, 1, id="trailing-dot"),
    pytest.param("1Gi", GI, GI * 1000, GI, id="gibibyte"),
    pytest.param("1.5Gi", 3 * GI // 2, 3 * GI // 2 * 1000, 3 * GI // 2, id="fractional-binary"),
    pytest.param("1Ki", 1024, 1024000, 1024, id="kibibyte"),
    pytest.param("128Mi", 128 * 2**20, 128 * 2**20 * 1000, 128 * 2**20, id="mebibyte"),
    pytest.param("1k", 1000, 10**6, 1000, id="kilo"),
    pytest.param("2M", 2 * 10**6, 2 * 10**9, 2 * 10**6, id="mega"),
    pytest.param("1E", 10**18, 10**21, 10**18, id="exa-suffix"),
    pytest.param("1e3", 1000, 10**6, 1000, id="exponent"),
    pytest.param("1E3", 1000, 10**6, 1000, id="exponent-upper"),
    pytest.param("1.5e-3", Fraction(3, 2000), 2, 1, id="negative-exponent-rounds-up"),
    pytest.param("1e+2", 100, 100000, 100, id="exponent-plus"),
    pytest.param("1n", Fraction(1, 10**9), 1, 1, id="nano-rounds-up"),
    pytest.param("1u", Fraction(1, 10**6), 1, 1, id="micro"),
    pytest.param("-1", -1, -1000, -1, id="negative"),
    pytest.param("+5", 5, 5000, 5, id="plus-sign"),
    pytest.param("-100m", Fraction(-1, 10), -100, -1, id="negative-rounds-away-from-zero"),
    pytest.param("0", 0, 0, 0, id="zero"),
    pytest.param(" 2 ", 2, 2000, 2, id="surrounding-space"),
    pytest.param(9, 9, 9000, 9, id="yaml-int"),
    pytest.param(0.5, Fraction(1, 2), 500, 1, id="yaml-float"),
    pytest.param(0.0015, Fraction(3, 2000), 2, 1, id="yaml-float-exact-decimal"),
])
def test_parse_quantity(text, exact, milli, whole):
    q = parse_quantity(text)
    assert q == exact
    assert milli_value(q) == milli
    assert value(q) == whole


def test_whole_values_are_ints():
    assert type(parse_quantity("1.0")) is int
    assert type(parse_quantity("1500m")) is Fraction
    assert type(parse_quantity("2000m")) is int


@pytest.mark.parametrize("bad", [
    pytest.param("12x", id="unknown-suffix"),
    pytest.param("", id="empty"),
    pytest.param("1.2.3", id="two-dots"),
    pytest.param(None, id="none"),
    pytest.param("1K", id="upper-k"),
    pytest.param("1e", id="bare-exponent"),
    pytest.param("Gi", id="suffix-only"),
    pytest.param("1 Gi", id="inner-space"),
    pytest.param("1GiB", id="bytes-suffix"),
    pytest.param(True, id="bool"),
    pytest.param(float("inf"), id="infinity"),
    pytest.param([1], id="list"),
    pytest.param("-", id="sign-only"),
])
def test_parse_quantity_rejects(bad):
    with pytest.raises(ValueError, match="invalid quantity"):
        parse_quantity(bad)


@pytest.mark.parametrize("name, raw, expected", [
    pytest.param("cpu", "100m", 100, id="cpu-millicores"),
    pytest.param("cpu", 2, 2000, id="cpu-int"),
    pytest.param("cpu", "0.5", 500, id="cpu-half"),
    pytest.param("memory", "1Gi", GI, id="memory"),
    pytest.param("memory", "100m", 1, id="memory-milli-rounds-up"),
    pytest.param("ephemeral-storage", "93478772582", 93478772582, id="ephemeral"),
    pytest.param("pods", "110", 110, id="pods"),
    pytest.param("hugepages-2Mi", "4Mi", 4 * 2**20, id="hugepages"),
    pytest.param("example.com/gpu", 1, 1, id="extended"),
])
def test_resource_amount(name, raw, expected):
    assert resource_amount(name, raw) == expected


def test_parse_resource_list_names_the_field():
    assert parse_resource_list({"cpu": "250m", "memory": "64Mi"}, field="x") == {
        "cpu": 250, "memory": 64 * 2**20}
    assert parse_resource_list(None, field="x") == {}
    with pytest.raises(ManifestError) as err:
        parse_resource_list({"cpu": "12x"}, field="spec.containers[0].resources.requests")
    assert err.value.field == "spec.containers[0].resources.requests.cpu"
    assert "invalid quantity '12x'" in str(err.value)
    with pytest.raises(ManifestError) as err:
        parse_resource_list(["cpu"], field="status.capacity")
    assert err.value.field == "status.capacity"
