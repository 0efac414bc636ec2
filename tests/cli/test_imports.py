"""A stack imports only its own platform's SDK (import cost is seconds: DESIGN.md §1)."""

import pytest

from tests.helpers import top_level_modules_a_plan_imports as imported_top_level_modules


@pytest.mark.parametrize("stack", ["dev", "ha"])
def test_k3s_stack_imports_no_cloud_sdk(stack):
    modules = imported_top_level_modules(stack)
    assert "pulumi_command" in modules  # the probe really planned a k3s stack
    assert not {"pulumi_aws", "pulumi_gcp", "pulumi_azure"} & modules


def test_aks_stack_imports_only_the_azure_sdk():
    modules = imported_top_level_modules("aks-train")
    assert "pulumi_azure" in modules
    assert not {"pulumi_aws", "pulumi_gcp", "pulumi_command", "pulumi_azure_native"} & modules
