"""Label key and value syntax as apimachinery's ``labels.NewRequirement`` checks it
(``content.IsLabelKey`` / ``content.IsLabelValue``): the same rules, the same error texts, which
users see in events when a selector or a node affinity term is malformed. Lengths are in bytes, as
Go counts them, and a pattern must match the whole text (Go's ``^...$``, not Python's ``$``, which
also matches before a final newline).
"""

from __future__ import annotations

import re

__all__ = ["label_key_errors", "label_value_errors", "regex_error"]

_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_RE = re.compile(_NAME_FMT)
_VALUE_FMT = "(" + _NAME_FMT + ")?"
_VALUE_RE = re.compile(_VALUE_FMT)
_DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = _DNS_LABEL + "(\\." + _DNS_LABEL + ")*"
_DNS_SUBDOMAIN_RE = re.compile(_DNS_SUBDOMAIN_FMT)
_NAME_ERR = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
             "with an alphanumeric character")
_VALUE_ERR = ("a valid label must be an empty string or consist of alphanumeric characters, '-', "
              "'_' or '.', and must start and end with an alphanumeric character")
_DNS_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError, double spaces included."""
    if not examples:
        return msg + " (regex used for validation is '" + fmt + "')"
    out = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i:
            out += " or "
        out += "'" + example + "', "
    return out + "regex used for validation is '" + fmt + "')"


def _nbytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def label_key_errors(key: str) -> list[str]:
    """Why ``key`` is no label key (none when it is one), as content.IsLabelKey words it."""
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if _nbytes(prefix) > 253:
                errs.append("prefix part must be no more than 253 bytes")
            if _DNS_SUBDOMAIN_RE.fullmatch(prefix) is None:
                errs.append("prefix part " + regex_error(_DNS_ERR, _DNS_SUBDOMAIN_FMT, "example.com"))
    else:
        return ["a valid label key " + regex_error(_NAME_ERR, _NAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _nbytes(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if _NAME_RE.fullmatch(name) is None:
        errs.append("name part " + regex_error(_NAME_ERR, _NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """Why ``value`` is no label value (none when it is one), as content.IsLabelValue words it."""
    errs = []
    if _nbytes(value) > 63:
        errs.append("must be no more than 63 bytes")
    if _VALUE_RE.fullmatch(value) is None:
        errs.append(regex_error(_VALUE_ERR, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs
