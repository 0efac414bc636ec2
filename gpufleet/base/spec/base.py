"""The base model every spec block derives from: camelCase keys, unknown keys rejected, frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from gpufleet.base.spec.text import check_address  # noqa: F401  (the spec modules import it from here)

# A Kubernetes DNS-1123 label: names of pools and hosts become node labels and resource names.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
# A non-empty label value (k8s.io/apimachinery IsValidLabelValue; at most 63 characters, checked beside it).
LABEL_VALUE = r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
# A label key ([prefix/]name), as Kueue's Topology CRD checks a level's nodeLabel (at most 316 characters).
LABEL_KEY = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"


def to_camel(name: str) -> str:
    """snake_case -> camelCase by underscores only (pydantic's own turns `k3s` into `k3S`)."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


class Model(BaseModel):
    """The spec's blocks. Modules that define them leave out `from __future__ import annotations`: with it every
    field's annotation is a string that pydantic compiles and evaluates when the class is made, about a third of the
    spec's import time, paid by every plan (bench/plan.py)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
    )


def check_cidr(value: str, example: str) -> str:
    """`value` when it is a CIDR block (host bits zero), else a ValueError naming `example` as one that is."""
    import ipaddress

    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        raise ValueError(f"'{value}' is not a CIDR block such as {example}") from None
    return value
