"""Protection of what holds state (gpufleet:cluster.protection), applied the same way by every platform.

Pulumi's `protect` is set on each stateful child, never on a component: children inherit `protect` from their
parent, which would also lock stateless children (node groups, Helm releases) that must stay replaceable.
When a stack turns protection off, its reason travels onto the resources as the `stateful-resource-protection`
exemption (a tag or annotation; a comment line in a remote command's script), so the policy pack shows why.
"""

from __future__ import annotations

from typing import Optional

import re

import pulumi

from gpufleet.base import labels as L
from gpufleet.base.spec.features.protection import ProtectionSpec
from gpufleet.base.spec.text import CONTROL

EXEMPT_KEY = L.exempt_key(L.STATEFUL_PROTECTION_POLICY)
# GCP label keys and values allow only [a-z0-9_-] (at most 63 characters): the key without "." and "/", the
# reason as a slug (Compute Engine docs, "Requirements for labels").
GCP_EXEMPT_KEY = L.gcp_exempt_key(L.STATEFUL_PROTECTION_POLICY)


def protect(protection: ProtectionSpec, **extra) -> pulumi.ResourceOptions:
    """ResourceOptions with `protect` as the stack says (merged with any other options given)."""
    return pulumi.ResourceOptions(protect=protection.enabled, **extra)


def exemption(protection: ProtectionSpec) -> dict[str, str]:
    """{exempt key: reason} when the stack turned protection off, else {} (for tags and annotations)."""
    return {} if protection.enabled else {EXEMPT_KEY: protection.reason or ""}


def gcp_exemption(protection: ProtectionSpec) -> dict[str, str]:
    """The exemption as a GCP label (the reason as a slug), or {}."""
    if protection.enabled:
        return {}
    slug = re.sub(r"[^a-z0-9_-]+", "-", (protection.reason or "").lower()).strip("-")[:63].rstrip("-")
    return {GCP_EXEMPT_KEY: slug or "unprotected"}


def azure_exemption(protection: ProtectionSpec) -> dict[str, str]:
    """The exemption as an Azure tag (tag names may not contain '/': Azure Resource Manager, "Use tags to organize your
    Azure resources", Limitations), under the GCP label's key; the value keeps the full reason (256 characters)."""
    return {} if protection.enabled else {GCP_EXEMPT_KEY: (protection.reason or "unprotected")[:256]}


def script_exemption(*reasons: Optional[str], key: str = EXEMPT_KEY) -> str:
    """The exemption (from stateful-resource-protection unless `key` names another policy's) as a comment line of a
    remote command's script ('' when there is no reason)."""
    why = "; ".join(r for r in reasons if r)
    # One comment line whatever the reason holds (the spec refuses control characters; this keeps the line one line
    # for reasons that did not come through it).
    why = CONTROL.sub(" ", why)
    return f"# {key}: {why}\n" if why else ""
