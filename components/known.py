"""Outputs a component reads before the cloud has answered.

A component derives values from its children's computed outputs (an EKS cluster's CA and OIDC issuer, a GKE cluster's
master auth, the kubeconfig a k3s server writes). Under `pulumi up` they are known when the derivation runs, and under
`pulumi preview` an unknown output skips it. Under Pulumi's standard unit-test mocks (`pulumi.runtime.set_mocks`
with a `new_resource` that returns the inputs, pulumi.com/docs/iac/guides/testing/unit/) an output the mock did not
return arrives as None, and a derivation that dereferences it raised deep in the SDK's serializer
(`TypeError: 'NoneType' object is not subscriptable`), failing the user's test. `known` keeps such a value None,
so the resources that read it register with that input unset, as the mock answered.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, TypeVar

R = TypeVar("R")


def known(fn: Callable[[Any], R]) -> Callable[[Any], Optional[R]]:
    """`fn` for `Output.apply`, run only when its value is there: None when the value is None, or when it is the list
    of `Output.all` and any item is None."""

    def apply(value: Any) -> Optional[R]:
        if value is None or (isinstance(value, (list, tuple)) and any(v is None for v in value)):
            return None
        return fn(value)

    return apply
