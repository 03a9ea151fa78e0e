"""The DRA CEL environment: the cases of upstream's ``dynamic-resource-allocation/cel/compile_test.go``
that apply to v1.36 defaults (list-type attributes are alpha and off; cost figures are cel-go's and
not ported), plus the Kubernetes quantity and semver libraries the selectors use."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedfw.plugins.dynamicresources.cel import (Cache, CELRuntimeError, compile_expression, device_data,
                                                   device_matches)

DRA = "dra.example.com"


@attrs.frozen(kw_only=True)
class Case:
    expression: str
    driver: str = ""
    attributes: dict[str, Any] = attrs.Factory(dict)
    capacity: dict[str, str] = attrs.Factory(dict)
    allow_multiple: bool | None = None
    match: bool = False
    compile_error: str | None = None
    match_error: str | None = None


CASES: dict[str, Case] = {
    "true": Case(expression="true", match=True),
    "false": Case(expression="false"),
    "syntax-error": Case(expression="?!", compile_error="Syntax error"),
    "type-error": Case(expression="1", compile_error="must evaluate to bool or the unknown type, not int"),
    "runtime-error-lookup-identifier": Case(
        expression='device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr"),
    "runtime-error-lookup-map": Case(
        expression='device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr"),
    "domain-check-negative": Case(expression='"no-such-domain" in device.attributes'),
    "domain-check-positive": Case(expression=f'"{DRA}" in device.attributes',
                                  attributes={f"{DRA}/something": {"bool": True}}, match=True),
    "empty-driver-name": Case(expression='device.driver == ""', match=True),
    "real-driver-name": Case(expression=f'device.driver == "{DRA}"', driver=DRA, match=True),
    "driver-name-qualifier": Case(expression=f'device.attributes["{DRA}"].name', driver=DRA,
                                  attributes={"name": {"bool": True}}, match=True),
    "driver-name-qualifier-map-lookup": Case(expression=f'device.attributes["{DRA}"]["name"]', driver=DRA,
                                             attributes={"name": {"bool": True}}, match=True),
    "bind": Case(expression=f'cel.bind(dra, device.attributes["{DRA}"], dra.name)', driver=DRA,
                 attributes={"name": {"bool": True}}, match=True),
    "qualified-attribute-name": Case(expression='device.attributes["other.example.com"].name', driver=DRA,
                                     attributes={"other.example.com/name": {"bool": True}}, match=True),
    "bool": Case(expression=f'device.attributes["{DRA}"].name', driver=DRA, attributes={"name": {"bool": True}},
                 match=True),
    "int": Case(expression=f'device.attributes["{DRA}"].name > 0', driver=DRA, attributes={"name": {"int": 1}},
                match=True),
    "string": Case(expression=f'device.attributes["{DRA}"].name == "fish"', driver=DRA,
                   attributes={"name": {"string": "fish"}}, match=True),
    "attribute-access-causes-match-error": Case(
        expression=f'device.attributes["{DRA}"].names', driver=DRA,
        attributes={"names": {"strings": ["fish", "bird"]}}, match_error="attribute names: unsupported attribute value"),
    "version": Case(expression=f'device.attributes["{DRA}"].name.isGreaterThan(semver("0.0.1"))', driver=DRA,
                    attributes={"name": {"version": "1.0.0"}}, match=True),
    "version_v": Case(
        expression=f'device.attributes["{DRA}"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        driver=DRA, attributes={"name": {"version": "1.0.0"}}, match=True),
    "quantity": Case(expression=f'device.capacity["{DRA}"].name.isGreaterThan(quantity("1Ki"))', driver=DRA,
                     capacity={"name": "1Mi"}, match=True),
    "check-positive": Case(
        expression=f'"name" in device.capacity["{DRA}"] && device.capacity["{DRA}"].name.isGreaterThan(quantity("1Ki"))',
        driver=DRA, capacity={"name": "1Mi"}, match=True),
    "check-negative": Case(
        expression=f'!("name" in device.capacity["{DRA}"]) || device.capacity["{DRA}"].name.isGreaterThan(quantity("1Ki"))',
        match=True),
    "all": Case(
        expression=" && ".join([
            f'device.capacity["{DRA}"].quantity.isGreaterThan(quantity("1Ki"))',
            f'device.attributes["{DRA}"].bool', f'device.attributes["{DRA}"].int > 0',
            f'device.attributes["{DRA}"].string == "fish"',
            f'device.attributes["{DRA}"].version.isGreaterThan(semver("0.0.1"))',
            f'device.capacity["{DRA}"]["quantity"].isGreaterThan(quantity("1Ki"))',
            f'device.attributes["{DRA}"]["bool"]', f'device.attributes["{DRA}"]["int"] > 0',
            f'device.attributes["{DRA}"]["string"] == "fish"',
            f'device.attributes["{DRA}"]["version"].isGreaterThan(semver("0.0.1"))']),
        driver=DRA, attributes={"bool": {"bool": True}, "int": {"int": 1}, "string": {"string": "fish"},
                                "version": {"version": "1.0.0"}},
        capacity={"quantity": "1Mi"}, match=True),
    "many": Case(expression=" && ".join(f'device.attributes["{DRA}"].{n}' for n in "abc"), driver=DRA,
                 attributes={n: {"bool": True} for n in "abc"}, match=True),
    "check_attribute_domains": Case(expression=f'device.attributes.exists_one(x, x == "{DRA}")', driver=DRA,
                                    attributes={"services": {"string": "some_example_value"}}, match=True),
    "check_attribute_ids": Case(expression=f'device.attributes["{DRA}"].exists_one(x, x == "services")', driver=DRA,
                                attributes={"services": {"string": "some_example_value"}}, match=True),
    "split_attribute": Case(expression=f'device.attributes["{DRA}"].services.split("example").size() >= 2',
                            driver=DRA, attributes={"services": {"string": "some_example_value"}}, match=True),
    "regexp_attribute": Case(expression=f'device.attributes["{DRA}"].services.matches("[^a]?sym")', driver=DRA,
                             attributes={"services": {"string": "asymetric"}}, match=True),
    "check_capacity_domains": Case(expression=f'device.capacity.exists_one(x, x == "{DRA}")', driver=DRA,
                                   capacity={"memory": "1Mi"}, match=True),
    "check_capacity_ids": Case(expression=f'device.capacity["{DRA}"].exists_one(x, x == "memory")', driver=DRA,
                               capacity={"memory": "1Mi"}, match=True),
    "allow_multiple_allocations": Case(expression="device.allowMultipleAllocations == true", driver=DRA,
                                       allow_multiple=True, match=True),
    "allow_multiple_allocations_default": Case(expression="device.allowMultipleAllocations == false", driver=DRA,
                                               match=True),
    "allow_multiple_allocations_false": Case(expression="device.allowMultipleAllocations == false", driver=DRA,
                                             allow_multiple=False, match=True),
}


def _device(tc: Case) -> dict[str, Any]:
    d: dict[str, Any] = {"name": "device", "attributes": tc.attributes,
                         "capacity": {k: {"value": v} for k, v in tc.capacity.items()}}
    if tc.allow_multiple is not None:
        d["allowMultipleAllocations"] = tc.allow_multiple
    return d


@pytest.mark.parametrize("name", sorted(CASES))
def test_cel(name: str) -> None:
    tc = CASES[name]
    compiled = compile_expression(tc.expression)
    if tc.compile_error is not None:
        assert compiled.error is not None and tc.compile_error in compiled.error
        return
    assert compiled.error is None
    if tc.match_error is not None:
        with pytest.raises(CELRuntimeError, match=tc.match_error):
            device_matches(compiled, device_data(tc.driver, _device(tc)))
        return
    assert device_matches(compiled, device_data(tc.driver, _device(tc))) is tc.match


@pytest.mark.parametrize("expression, expected", [
    # Kubernetes quantity library: values compare by amount, whatever the suffix
    ('quantity("1Gi") == quantity("1024Mi")', True),
    ('quantity("1Gi").compareTo(quantity("1G")) == 1', True),
    ('quantity("500m").isLessThan(quantity("1"))', True),
    ('quantity("1.5").isInteger()', False),
    ('quantity("2k").asInteger() == 2000', True),
    ('quantity("1").add(quantity("500m")).asApproximateFloat() == 1.5', True),
    ('quantity("1").sub(1).isInteger() && sign(quantity("-3")) == -1', True),
    ('isQuantity("1Gi") && !isQuantity("one")', True),
    # semver library: semver 2.0.0 precedence
    ('semver("1.2.3").isGreaterThan(semver("1.2.3-rc.1"))', True),
    ('semver("1.10.0").compareTo(semver("1.9.0")) == 1', True),
    ('semver("1.0.0-alpha.2").isLessThan(semver("1.0.0-alpha.10"))', True),
    ('semver("1.2.3+build.5") == semver("1.2.3")', True),
    ('semver("v2", true).major() == 2 && semver("1.2.3").patch() == 3', True),
    ('isSemver("1.2") || isSemver("01.2.3")', False),
])
def test_kubernetes_libraries(expression: str, expected: bool) -> None:
    compiled = compile_expression(expression)
    assert compiled.error is None
    assert device_matches(compiled, device_data(DRA, {"name": "d"})) is expected


@pytest.mark.parametrize("expression, message", [
    ('semver("01.2.3").major() == 1', 'Major number must not contain leading zeroes "01"'),
    ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
    ('quantity("1") == quantity("x")', "invalid quantity 'x'"),
])
def test_kubernetes_library_errors(expression: str, message: str) -> None:
    compiled = compile_expression(expression)
    with pytest.raises(CELRuntimeError, match=message):
        device_matches(compiled, device_data(DRA, {"name": "d"}))


def test_compile_errors_as_upstream() -> None:
    undeclared = compile_expression("noSuchVar")
    assert undeclared.error is not None
    assert undeclared.error.startswith("compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar'")
    mixed = compile_expression('quantity("1").isGreaterThan(semver("1.0.0"))')
    assert mixed.error is not None and "found no matching overload for 'isGreaterThan'" in mixed.error


def test_cache_compiles_each_expression_once() -> None:
    cache = Cache(max_size=2)
    first = cache.get_or_compile("true")
    assert cache.get_or_compile("true") is first
    cache.get_or_compile("false")
    cache.get_or_compile("1 == 1")
    assert cache.get_or_compile("true") is not first  # the oldest entry made room


@pytest.mark.parametrize("expression,error", [
    # the texts kube-apiserver v1.36.2 answers when a DeviceClass with the selector is created
    ('device.drivr == "x"', "compilation failed: ERROR: <input>:1:7: undefined field 'drivr'\n"
                            ' | device.drivr == "x"\n'
                            " | ......^"),
    ('device.driver == "a" && device.capacityy["x"].mem > 1',
     "compilation failed: ERROR: <input>:1:31: undefined field 'capacityy'\n"
     ' | device.driver == "a" && device.capacityy["x"].mem > 1\n'
     " | ..............................^"),
    ("device.driver", "must evaluate to bool or the unknown type, not string"),
    ("foo == 1", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n"
                 " | foo == 1\n"
                 " | ^"),
])
def test_device_is_checked_as_an_object_of_its_fields(expression, error):
    assert compile_expression(expression).error == error


@pytest.mark.parametrize("expression", [
    "device.allowMultipleAllocations", 'device.attributes["a.com"].x.y == 1', '"device.drivr" == device.driver',
    'device.attributes.exists(d, d == "a.com")', 'cel.bind(x, device.driver, x == "a")',
    'device.capacity["a.com"].memory.compareTo(quantity("1Gi")) >= 0',
])
def test_what_upstream_accepts_compiles(expression):
    assert compile_expression(expression).error is None
