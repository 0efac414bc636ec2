"""existing: addons traits (gpufleet/base/platforms/contract/addons.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base.platforms.contract.addons import AddonTraits

# Words existing stacks got before the platforms' traits (issue 47), when they fell into another platform's branch:
# kept so that their refusals stay byte-identical; each names k3s or EKS where an existing cluster is meant.
K3S_WORDS_PRE_PULL = "k3s: list the images and they are pre-pulled"
EKS_WORDS_NO_DEVICE_PLUGIN = ("EKS AL2023 NVIDIA AMIs ship no device plugin (Bottlerocket NVIDIA AMIs do: ami "
                              "bottlerocket-nvidia)")


class ExistingAddons(AddonTraits):
    cold_start_instead = K3S_WORDS_PRE_PULL
    rwx_storage_hint = ("gpufleet installs no storage on an existing cluster: cache models on its own ReadWriteMany "
                        "class")
    # An existing cluster's own Prometheus or none: metrics_backends keeps the default (kube-prometheus-stack, none).

    def missing_device_plugin(self, pool: Any) -> Optional[str]:
        return EKS_WORDS_NO_DEVICE_PLUGIN
