"""k3s: review traits (gpufleet/base/platforms/contract/review.py says what each one means).

k3s is installed on the hosts by pulumi-command remote commands (its server and agents), with a pulumi-random token.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from gpufleet.base.platforms.contract.review import ReplaceTable, ReviewTraits, VersionedPart
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL

_K3S_SERVER = re.compile(r"INSTALL_K3S_EXEC=['\"]?server\b")
_K3S_VERSION = re.compile(r"INSTALL_K3S_VERSION='?(v[0-9][^' ]*)")
_COMMANDS = ("command:remote:Command", "command:local:Command")

_KEY = "cluster.kubernetesVersion"
"""The stack key that sets every version these parts run (gpufleet:cluster.kubernetesVersion)."""

class K3sReview(ReviewTraits):
    replace_tables = {
        "command:remote:Command": ReplaceTable(
            paths=("triggers",),
            source="pulumi/pulumi-command docs: 'triggers' replaces the resource on change; other inputs run `update` "
            "(or `create` again)",
            checked=False,
        ),
        "command:local:Command": ReplaceTable(
            paths=("triggers",),
            source="pulumi/pulumi-command docs: 'triggers' replaces the resource on change",
            checked=False,
        ),
        "random:index/randomPassword:RandomPassword": ReplaceTable(
            paths=(
                "length", "special", "upper", "lower", "numeric", "number", "minLower", "minUpper", "minNumeric",
                "minSpecial", "overrideSpecial", "keepers",
            ),
            source="terraform-provider-random random_password: every argument RequiresReplace",
            checked=False,
        ),
    }

    disruptive_kinds = {"command:remote:Command": "host install (k3s server/agent)"}

    def data_held(self, type_: str, inputs: dict) -> Optional[str]:
        """A k3s server install holds the cluster's datastore, which the uninstall script removes."""
        if type_ == "command:remote:Command" and _K3S_SERVER.search(str(inputs.get("create") or "")):
            host = (inputs.get("connection") or {}).get("host") if isinstance(inputs.get("connection"), dict) else None
            return (f"the k3s datastore on {host or 'the server'} (etcd member or SQLite, local etcd snapshots): the uninstall "
                    "script removes it")
        return None

    def kubernetes_parts(self, type_: str, inputs: dict) -> list[VersionedPart]:
        """A server install is the control plane, an agent install a node pool's host, at the k3s release its script
        installs (INSTALL_K3S_VERSION)."""
        if type_ != "command:remote:Command":
            return []
        script = str(inputs.get("create") or "")
        m = _K3S_VERSION.search(script)
        if not m:
            return []
        role = CONTROL_PLANE if _K3S_SERVER.search(script) else NODE_POOL
        return [VersionedPart(role, "", m.group(1), _KEY)]

    def versions(self, type_: str, inputs: dict) -> list[tuple[str, Any]]:
        if type_ not in _COMMANDS:
            return []
        m = _K3S_VERSION.search(str(inputs.get("create") or ""))
        if not m:
            return []
        return [("k3s", m.group(1)), ("Kubernetes (k3s)", ".".join(m.group(1).lstrip("v").split(".")[:2]))]
