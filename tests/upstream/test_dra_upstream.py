"""Upstream formats of the DRA layer (issue 34): NVIDIA's DRA driver for GPUs renders with the real chart and gpufleet's
values, and every DeviceClass it renders, every ResourceClaimTemplate and ComputeDomain gpufleet declares validates
(kubernetes-validate strict at the stacks' Kubernetes version; the ComputeDomain CRD in ../shared/reference)."""

from __future__ import annotations

import kubernetes_validate
import pytest

from gpufleet.base import versions
from gpufleet.components.gpu_stack.dra_driver import (NAMESPACE, DraClaimPool, DraDriverArgs, claim_templates, driver_values,
                                                     mig_class, mig_device_class)
from gpufleet.base.spec.features.dra import ComputeDomainSpec
from tests.crd_validate import validate_cr
from tests.helm import template
from tests.helm_values import missing_paths
from tests.helpers import by_type, planned
from tests.k8s_validate import as_object

K8S = versions.KUBERNETES_DEFAULT
ARGS = DraDriverArgs(pools=[DraClaimPool("gb200"), DraClaimPool("h100-mig", ("1g.10gb", "3g.40gb"))],
                     node_taints=[{"key": "gpufleet.io/spot", "value": "true", "effect": "NoSchedule"}],
                     compute_domains=[ComputeDomainSpec(name="train", pool="gb200")])


@pytest.fixture
def chart(reference):
    path = reference / "charts" / f"{versions.DRA_DRIVER_NVIDIA_GPU.name}-{versions.DRA_DRIVER_NVIDIA_GPU.version}.tgz"
    if not path.is_file():
        pytest.skip(f"DRA driver chart not found at {path}")
    return path


def test_values_exist_in_the_charts_values(reference):
    values = reference / "dra-driver-nvidia-gpu" / f"values-v{versions.DRA_DRIVER_NVIDIA_GPU.version}.yaml"
    assert missing_paths(driver_values(ARGS), values) == []


def test_chart_renders_with_gpufleets_values_and_every_object_validates(chart):
    objs = template(chart, driver_values(ARGS), NAMESPACE, release=versions.DRA_DRIVER_NVIDIA_GPU.name, kube_version=f"{K8S}.0")
    classes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "DeviceClass"}
    assert {"gpu.nvidia.com", "mig.nvidia.com", "compute-domain-default-channel.nvidia.com"} <= set(classes)
    assert all(c["apiVersion"] == "resource.k8s.io/v1" for c in classes.values())
    for obj in objs:
        kubernetes_validate.validate(obj, f"{K8S}.0", strict=True)
    plugin = next(o for o in objs if o["kind"] == "DaemonSet" and "kubelet-plugin" in o["metadata"]["name"])
    pod = plugin["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"gpufleet.io/gpu-allocation": "dra"}
    assert {"key": "gpufleet.io/spot", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]


def test_chart_refuses_gpu_resources_without_the_override(chart):
    with pytest.raises(AssertionError, match="gpuResourcesEnabledOverride"):
        template(chart, {**driver_values(ARGS), "gpuResourcesEnabledOverride": False}, NAMESPACE, kube_version=f"{K8S}.0")


def test_claim_templates_validate_strictly():
    templates = claim_templates(DraClaimPool("h100-mig", ("1g.10gb",)))
    assert set(templates) == {"h100-mig-gpu", "h100-mig-mig-1g-10gb"}
    for name, spec in templates.items():
        obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
               "metadata": {"name": name, "namespace": "default"}, "spec": spec}
        kubernetes_validate.validate(obj, f"{K8S}.0", strict=True)


def test_mig_device_classes_narrow_the_charts_mig_class_to_one_profile_and_validate(chart, reference):
    """gpufleet's per-profile DeviceClass is the chart's mig.nvidia.com selector (rendered from the pinned chart) plus the
    driver's profile attribute (demo gpu-test4.yaml selects MIG devices by `device.attributes['gpu.nvidia.com'].profile`)."""
    objs = template(chart, driver_values(ARGS), NAMESPACE, release=versions.DRA_DRIVER_NVIDIA_GPU.name, kube_version=f"{K8S}.0")
    chart_mig = next(o for o in objs if o["kind"] == "DeviceClass" and o["metadata"]["name"] == "mig.nvidia.com")
    (chart_selector,) = [s["cel"]["expression"] for s in chart_mig["spec"]["selectors"]]
    demo = (reference / "dra-driver-nvidia-gpu/examples/quickstart-v1/gpu-test4.yaml").read_text()
    assert "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'" in demo
    for profile in ("1g.10gb", "3g.40gb", "1g.35gb+me"):
        spec = mig_device_class(profile)
        (expression,) = [s["cel"]["expression"] for s in spec["selectors"]]
        assert expression == f"{chart_selector} && device.attributes['gpu.nvidia.com'].profile == '{profile}'"
        obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": mig_class(profile)}, "spec": spec}
        kubernetes_validate.validate(obj, f"{K8S}.0", strict=True)
    assert mig_class("1g.35gb+me") == "mig-1g-35gb-me.gpufleet.io"
    template_spec = claim_templates(DraClaimPool("h100-mig", ("3g.40gb",)))["h100-mig-mig-3g-40gb"]["spec"]
    assert template_spec["devices"]["requests"][0]["exactly"]["deviceClassName"] == "mig-3g-40gb.gpufleet.io"


@pytest.mark.parametrize("stack", ["nvl72-k3s", "nvl72-gke", "nvl72-eks"])
def test_nvl72_stacks_objects_validate(stack, reference):
    plan = planned(stack)
    claims = by_type(plan, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    ns = "research" if stack == "nvl72-k3s" else "default"
    assert [c.name.rsplit("-dra-driver-", 1)[1] for c in claims] == [f"claim-{ns}-gb200-gpu", f"claim-{ns}-gb200-node"]
    node = next(as_object(c) for c in claims if c.name.endswith("-node"))
    assert node["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 4  # a GB200 machine's 4 GPUs
    for c in claims:
        kubernetes_validate.validate(as_object(c), f"{K8S}.0", strict=True)
    domains = by_type(plan, "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")
    assert len(domains) == 1
    for d in domains:
        assert validate_cr(as_object(d)) == []
        assert as_object(d)["spec"]["channel"]["resourceClaimTemplate"]["name"] == "train-channel"


# --- Kueue admits DRA claims; a multi-node job on a ComputeDomain (examples/nvl72-training-jobset.yaml) -----------

def _kueue_chart(reference):
    path = reference / "charts" / f"{versions.KUEUE.name}-{versions.KUEUE.version}.tgz"
    if not path.is_file():
        pytest.skip(f"Kueue chart not found at {path}")
    return path


def test_kueue_default_configuration_is_the_pinned_charts(reference):
    """gpufleet rewrites controllerManagerConfigYaml whole: its base must be the chart's own default at the pin."""
    import tarfile

    import yaml

    from gpufleet.components.workloads.kueue import DEFAULT_MANAGER_CONFIG

    with tarfile.open(_kueue_chart(reference)) as tar:
        values = yaml.safe_load(tar.extractfile("kueue/values.yaml").read())
    assert yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"]) == DEFAULT_MANAGER_CONFIG


def test_kueue_renders_its_configuration_with_the_device_class_mappings(reference):
    import yaml

    release = next(r for r in by_type(planned("nvl72-k3s"), "kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "kueue")
    objs = template(_kueue_chart(reference), release.inputs["values"], "kueue-system", release="kueue", kube_version=f"{K8S}.0")
    config = next(o for o in objs if o["kind"] == "ConfigMap" and "controller_manager_config.yaml" in o.get("data", {}))
    parsed = yaml.safe_load(config["data"]["controller_manager_config.yaml"])
    assert parsed["resources"]["deviceClassMappings"] == [
        {"name": "dra.gpufleet.io/gpu", "deviceClassNames": ["gpu.nvidia.com"]},
        {"name": "dra.gpufleet.io/imex-channel", "deviceClassNames": ["compute-domain-default-channel.nvidia.com"]},
    ]


def _jobset():
    import yaml

    from tests.helpers import ROOT

    return next(d for d in yaml.safe_load_all((ROOT / "examples/nvl72-training-jobset.yaml").read_text()) if d)


def test_the_nvl72_jobset_validates_against_jobsets_crd_and_the_pod_schema():
    jobset = _jobset()
    assert validate_cr(jobset) == []
    pod_template = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "namespace": "research"}, **{"spec": pod_template["spec"]}}
    kubernetes_validate.validate(pod, f"{K8S}.0", strict=True)
    bad = {**pod, "spec": {**pod["spec"], "resourceClaims": [{"name": "gpus", "resourceClaimTemplate": "gb200-node"}]}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, f"{K8S}.0", strict=True)


def test_the_nvl72_jobset_uses_what_the_nvl72_stack_creates_and_kueue_can_admit_it():
    """Every claim template, the ComputeDomain's channel, the LocalQueue exist in the plan; Kueue maps every DeviceClass
    the claims use (an unmapped one makes the workload inadmissible: kueue v0.19.2 pkg/dra/claims.go) and the pool's
    ClusterQueue has quota for what the whole JobSet charges."""
    jobset = _jobset()
    job = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]
    pods = job["parallelism"] * jobset["spec"]["replicatedJobs"][0]["replicas"]
    _assert_claims_admissible(jobset["metadata"]["namespace"], jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
                              job["template"]["spec"], pods)


def _assert_claims_admissible(ns: str, queue: str, pod: dict, pods: int) -> None:
    """The claims of `pods` pods of this spec exist in the nvl72-k3s plan, Kueue maps their DeviceClasses, and the
    queue's ClusterQueue has quota for all of them (the whole NVL72 rack: exactly 72 GPUs)."""
    import yaml

    plan_ = planned("nvl72-k3s")
    templates = {(r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]): r.inputs["spec"]
                 for r in by_type(plan_, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")}
    domains = {(r.inputs["metadata"]["namespace"], r.inputs["spec"]["channel"]["resourceClaimTemplate"]["name"])
               for r in by_type(plan_, "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")}
    queues = {(r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]): r.inputs["spec"]["clusterQueue"]
              for r in by_type(plan_, "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")}
    classes: dict[str, int] = {}
    for claim in pod["resourceClaims"]:
        key = (ns, claim["resourceClaimTemplateName"])
        if key in domains:
            classes["compute-domain-default-channel.nvidia.com"] = classes.get("compute-domain-default-channel.nvidia.com", 0) + 1
            continue
        assert key in templates, key
        for request in templates[key]["spec"]["devices"]["requests"]:
            cls = request["exactly"]["deviceClassName"]
            classes[cls] = classes.get(cls, 0) + int(request["exactly"]["count"])
    assert classes == {"gpu.nvidia.com": 4, "compute-domain-default-channel.nvidia.com": 1}
    cq_name = queues[(ns, queue)]
    release = next(r for r in by_type(plan_, "kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "kueue")
    mappings = yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])["resources"]["deviceClassMappings"]
    resource_of = {c: m["name"] for m in mappings for c in m["deviceClassNames"]}
    assert set(classes) <= set(resource_of)
    cq = next(r for r in by_type(plan_, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue") if r.inputs["metadata"]["name"] == cq_name)
    quota = {e["name"]: float(e["nominalQuota"]) for e in cq.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
             if e["name"] != "memory"}
    for cls, n in classes.items():
        assert quota[resource_of[cls]] >= n * pods, (cls, quota)
    assert quota["dra.gpufleet.io/gpu"] == 72  # the whole rack: the JobSet fits exactly


# --- the same job as a Kubeflow trainer v2 TrainJob (examples/nvl72-trainjob.yaml) -----------------------------------


def _trainjob_docs() -> dict:
    import yaml

    from tests.helpers import ROOT

    return {d["kind"]: d for d in yaml.safe_load_all((ROOT / "examples/nvl72-trainjob.yaml").read_text()) if d}


def test_the_nvl72_trainjob_and_its_runtime_validate_against_the_trainer_crds_and_the_pod_schema():
    docs = _trainjob_docs()
    assert set(docs) == {"TrainingRuntime", "TrainJob"}
    for doc in docs.values():
        assert validate_cr(doc) == [], doc["kind"]
    # The pod the trainer builds: the runtime's template, the TrainJob's image, command and resourcesPerNode on the
    # trainer container `node` (the one the ancestor label marks). It must be a valid Pod, claims and all.
    runtime, job = docs["TrainingRuntime"], docs["TrainJob"]
    rjob = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]
    assert rjob["template"]["metadata"]["labels"]["trainer.kubeflow.org/trainjob-ancestor-step"] == "trainer"
    spec = rjob["template"]["spec"]["template"]["spec"]
    trainer = job["spec"]["trainer"]
    container = {**spec["containers"][0], "image": trainer["image"], "command": trainer["command"],
                 "resources": trainer["resourcesPerNode"]}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "node", "namespace": "research"},
           "spec": {**spec, "containers": [container]}}
    kubernetes_validate.validate(pod, f"{K8S}.0", strict=True)
    # The API server (not the OpenAPI schema) refuses a container claim the pod does not declare: every claim the
    # TrainJob asks for per node is one of the runtime's pod-level claims.
    assert {c["name"] for c in trainer["resourcesPerNode"]["claims"]} == {c["name"] for c in spec["resourceClaims"]}


def test_the_nvl72_trainjob_uses_what_the_nvl72_stack_creates_and_kueue_can_admit_it():
    docs = _trainjob_docs()
    runtime, job = docs["TrainingRuntime"], docs["TrainJob"]
    ns = job["metadata"]["namespace"]
    assert runtime["metadata"]["namespace"] == ns  # a namespaced runtime serves TrainJobs of its namespace only
    assert job["spec"]["runtimeRef"] == {"name": runtime["metadata"]["name"], "kind": "TrainingRuntime"}
    assert job["spec"]["trainer"]["numNodes"] * job["spec"]["trainer"]["numProcPerNode"] == 72
    plan_ = planned("nvl72-k3s")
    assert any(r.inputs.get("name") == "trainer" or "trainer" in r.name for r in by_type(plan_, "kubernetes:helm.sh/v3:Release"))
    import yaml

    kueue = next(r for r in by_type(plan_, "kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "kueue")
    config = yaml.safe_load(kueue.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert "trainer.kubeflow.org/trainjob" in config["integrations"]["frameworks"]
    spec = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    _assert_claims_admissible(ns, job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], spec,
                              job["spec"]["trainer"]["numNodes"])
