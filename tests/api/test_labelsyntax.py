"""Label key and value syntax as labels.NewRequirement checks it (content.IsLabelKey/IsLabelValue)."""

from __future__ import annotations

import pytest

from kschedfw.api.labelsyntax import label_key_errors, label_value_errors

# apimachinery's RegexError, with its double spaces
NAME_REGEX = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
              "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


@pytest.mark.parametrize("key", ["a", "example.com/a", "kubernetes.io/hostname", "a" * 63, "A-b_c.d"])
def test_label_keys_upstream_accepts(key):
    assert label_key_errors(key) == []


@pytest.mark.parametrize("key, errors", [
    ("", ["name part must be non-empty", "name part " + NAME_REGEX]),
    ("a" * 64, ["name part must be no more than 63 bytes"]),
    ("é" * 32, ["name part must be no more than 63 bytes", "name part " + NAME_REGEX]),  # 64 bytes in UTF-8
    ("key\n", ["name part " + NAME_REGEX]),  # Go's $ is the end of the text; Python's also matches before \n
    ("/a", ["prefix part must be non-empty"]),
    ("a/b/c", ["a valid label key " + NAME_REGEX + " with an optional DNS subdomain prefix and '/' "
               "(e.g. 'example.com/MyName')"]),
])
def test_label_keys_upstream_refuses(key, errors):
    assert label_key_errors(key) == errors


def test_label_values():
    assert label_value_errors("") == [] and label_value_errors("v-1.x_y") == []
    assert label_value_errors("v" * 64) == ["must be no more than 63 bytes"]
    assert label_value_errors("v\n")[0].startswith("a valid label must be an empty string")
