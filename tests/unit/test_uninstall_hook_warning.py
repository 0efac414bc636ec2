"""The plan's warning for a chart whose own uninstall hook deletes the CRDs gpufleet keeps on delete
(gpufleet/app/plan/upgrade_warnings.py crds_deleted_on_uninstall; the AMD GPU Operator's on a whole plan:
tests/upstream/test_chart_renders.py)."""

from __future__ import annotations

from gpufleet.app.plan.mocks import Registration
from gpufleet.app.plan.upgrade_warnings import CONFIG_GROUP, RELEASE, crds_deleted_on_uninstall
from gpufleet.base import versions

AMD = versions.AMD_GPU_OPERATOR


def _group(name: str, retained: bool = True) -> Registration:
    return Registration(urn=f"urn:{name}", type=CONFIG_GROUP, name=name, parent=None, custom=False, inputs={},
                        retain_on_delete=retained)


def _release(name: str, chart: str, version: str, after: list[Registration]) -> Registration:
    return Registration(urn=f"urn:{name}", type=RELEASE, name=name, parent=None, custom=True,
                        inputs={"chart": chart, "version": version}, dependencies=[g.urn for g in after])


def _amd(after: list[Registration]) -> Registration:
    return _release("lab-amd-release", AMD.archive, AMD.version, after)


def test_the_release_whose_hook_deletes_the_kept_crds_is_named_with_its_group():
    group = _group("lab-amd-crds")
    (warning,) = crds_deleted_on_uninstall("lab", [group, _amd([group])])
    assert (warning.stack, warning.path) == ("lab", "resource lab-amd-release")
    assert warning.message.startswith(
        f"chart gpu-operator-charts {AMD.version}: uninstalling this release (`pulumi destroy`, or a stack that no "
        "longer installs it) runs the chart's own hook templates/post-delete-hook.yaml (Job "
        "delete-custom-resource-definitions), which deletes the CRDs of lab-amd-crds that gpufleet keeps on delete")


def test_no_warning_without_kept_crds_or_without_such_a_hook():
    not_kept = _group("lab-amd-crds", retained=False)
    # The archive was not on this machine: no group, the release installs its crds/ itself (crds_not_applied says so).
    assert crds_deleted_on_uninstall("lab", [_amd([])]) == []
    assert crds_deleted_on_uninstall("lab", [not_kept, _amd([not_kept])]) == []
    # Another retained group the release waits for is not its chart's.
    other = _group("lab-gateway-api")
    assert crds_deleted_on_uninstall("lab", [other, _amd([other])]) == []
    # JobSet's chart deletes no CRD on uninstall.
    jobset_crds = _group("lab-jobset-crds")
    jobset = _release("lab-jobset-release", f"{versions.JOBSET.repo}/jobset", versions.JOBSET.version, [jobset_crds])
    assert crds_deleted_on_uninstall("lab", [jobset_crds, jobset]) == []
