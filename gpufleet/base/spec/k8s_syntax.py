"""Kubernetes name and label syntax, as the API server validates it (k8s.io/apimachinery
pkg/util/validation/validation.go: IsQualifiedName, IsValidLabelValue, IsDNS1123Label, IsDNS1123Subdomain;
pkg/apis/core/validation ValidateTaint: a taint key is a qualified name, its value a label value).

Each function returns None when the text is valid, else why not (in words for the stack's author).
"""

from __future__ import annotations

import re
from typing import Optional

NAME_MAX = 63  # a label value, the name part of a qualified name, a DNS-1123 label
SUBDOMAIN_MAX = 253  # a DNS-1123 subdomain (most object names; a qualified name's prefix)
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

NAME_RULE = "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"


def qualified_name(key: str) -> Optional[str]:
    """A label or taint key: `[prefix/]name`, prefix a DNS subdomain of at most 253 characters, name at most 63."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return "the prefix before '/' is empty"
    if key.count("/") > 1:
        return "a key has at most one '/' (prefix/name)"
    if prefix and (len(prefix) > SUBDOMAIN_MAX or not _SUBDOMAIN.match(prefix)):
        return f"the prefix '{prefix}' must be a lowercase DNS subdomain of at most {SUBDOMAIN_MAX} characters, e.g. example.com"
    if not name:
        return "the name part is empty"
    if len(name) > NAME_MAX:
        return f"the name part '{name}' is {len(name)} characters; at most {NAME_MAX}"
    if not _NAME.match(name):
        return f"the name part '{name}' must be {NAME_RULE}"
    return None


def label_value(value: str) -> Optional[str]:
    """A label value (also a taint value): empty, or at most 63 characters of the name alphabet."""
    if value == "":
        return None
    if len(value) > NAME_MAX:
        return f"{len(value)} characters; a label value holds at most {NAME_MAX}"
    if not _NAME.match(value):
        return f"a label value must be {NAME_RULE} (no spaces, ':' or '/')"
    return None


def dns_label(name: str) -> Optional[str]:
    if len(name) > NAME_MAX or not _DNS_LABEL.match(name):
        return f"must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most {NAME_MAX} characters"
    return None


def dns_subdomain(name: str) -> Optional[str]:
    if len(name) > SUBDOMAIN_MAX or not _SUBDOMAIN.match(name):
        return f"must be a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', at most {SUBDOMAIN_MAX} characters"
    return None
