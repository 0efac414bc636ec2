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

    # The install command's secret inputs (components/k3s/cluster.py): `stdin` is the host's k3s config.yaml (keys are
    # `k3s server`/`k3s agent` flags, docs.k3s.io/installation/configuration) then registries.yaml (`mirrors`,
    # `configs`, docs.k3s.io/installation/private-registry); `connection` is pulumi-command's ConnectionArgs.
    hidden_names = {"command:remote:Command": {
        "stdin.node-label": "node labels", "stdin.node-taint": "node taints", "stdin.node-name": "node name",
        "stdin.server": "the server it joins", "stdin.token": "join token", "stdin.tls-san": "API certificate names",
        "stdin.disable": "disabled k3s components", "stdin.cluster-init": "embedded etcd bootstrap",
        "stdin.write-kubeconfig-mode": "kubeconfig file mode", "stdin.default-local-storage-path": "local volume path",
        "stdin.etcd-s3-access-key": "etcd snapshot bucket credentials",
        "stdin.etcd-s3-secret-key": "etcd snapshot bucket credentials",
        "stdin.mirrors": "registry mirror", "stdin.configs": "registry credentials",
        "connection.host": "SSH address", "connection.port": "SSH port", "connection.user": "SSH user",
        "connection.privateKey": "SSH key",
    }}

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
