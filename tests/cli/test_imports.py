"""A stack imports only its own platform's SDK (import cost is seconds: DESIGN.md §1)."""

import pytest

from tests.helpers import modules_a_plan_imports as imported_modules
from tests.helpers import top_level_modules_a_plan_imports as imported_top_level_modules


@pytest.mark.parametrize("stack", ["dev", "ha"])
def test_k3s_stack_imports_no_cloud_sdk(stack):
    modules = imported_top_level_modules(stack)
    assert "pulumi_command" in modules  # the probe really planned a k3s stack
    assert not {"pulumi_aws", "pulumi_gcp", "pulumi_azure", "pulumi_azure_native"} & modules


def test_aks_stack_imports_only_the_azure_native_sdk():
    """Azure Native's package holds every Azure service (about 6,000 files): an AKS plan loads only the services its
    components use (the package's own __init__ loads the others lazily, docs/aks.md)."""
    full = imported_modules("aks-train")
    modules = {m.split(".")[0] for m in full}
    assert "pulumi_azure_native" in modules
    assert not {"pulumi_aws", "pulumi_gcp", "pulumi_command", "pulumi_azure"} & modules
    services = {m.split(".")[1] for m in full if m.startswith("pulumi_azure_native.") and not m.split(".")[1].startswith("_")}
    assert services == {"authorization", "containerservice", "network", "provider", "resources"}
