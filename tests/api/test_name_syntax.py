"""Names and label keys are matched whole, as Go's regexp matches ``^...$``: a value with a final
newline is refused (Python's ``$`` would let it through), and v1.36 apimachinery's
IsQualifiedName/IsValidLabelValue are content.IsLabelKey/IsLabelValue, which count bytes."""

from __future__ import annotations

import pytest

from kschedfw.api.validation import is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from kschedfw.cluster.apiserver.apivalidation import is_dns1123_label


@pytest.mark.parametrize("check", [is_dns1123_subdomain, is_dns1123_label, is_qualified_name, is_valid_label_value])
def test_a_final_newline_is_refused(check):
    assert check("abc") == []
    assert check("abc\n") != []


def test_lengths_are_counted_in_bytes_as_upstream_words_them():
    assert is_qualified_name("a" * 64) == ["name part must be no more than 63 bytes"]
    assert is_valid_label_value("é" * 32)[0] == "must be no more than 63 bytes"  # 64 bytes, 32 characters
