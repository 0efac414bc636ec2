"""Real-chart tests of gpufleet:registry.mirror (issue 37): with a mirror set, every Helm release of the air-gapped
example stacks, rendered by a real helm with the pinned chart (../shared/reference/charts/) and the values gpufleet
passes, references no image outside the mirror, and `gpufleet images` lists exactly the images the render references.

Images are collected two ways, so a miss in one shows in the other: the fields that name images (`image:` strings of
pods and custom resources, the repository/image/version triplets of NVIDIA's custom resources, images passed in env
values; gpufleet.app.images.referenced_images), and every string anywhere in the render that starts with a public
registry host.
"""

from __future__ import annotations

import re

import pytest

from gpufleet.app import images as listing
from gpufleet.base.catalog import images as catalog_images
from tests.helm import template
from tests.helpers import CHARTS, REFERENCE, example_config, plan_config
from tests.helpers import planned as _planned
from tests.upstream.test_chart_renders import API_VERSIONS, archive, releases

STACKS = ("airgap-k3s", "airgap-eks", "airgap-gke", "airgap-eks-karpenter")
# Unusual-valid variants of example stacks with a mirror, for the charts and gpufleet-made objects the air-gapped
# examples do not install (issue 37: every chart with a reference archive): the AMD GPU Operator and its DeviceConfigs
# (amd-lab, driver inbox), the Network Operator and its NicClusterPolicy (lab's RDMA pool, macvlan and SR-IOV),
# amp's standalone exporters (airgap-k3s and airgap-eks run kube-prometheus-stack), the Kubeflow trainer with its bundled JobSet and its ClusterTrainingRuntimes, the DRA driver.
# The serving layer (issue 38): inference-k3s (LeaderWorkerSet, Envoy Gateway and its proxy and ratelimit images set in
# its EnvoyGateway config, vLLM) and inference-gke (the InferencePool chart's endpoint picker) with a mirror.
VARIANTS = ("mirror-amd", "mirror-rdma", "mirror-sriov", "mirror-amp", "mirror-trainer", "mirror-dra",
            "mirror-cold-start", "mirror-serving-k3s", "mirror-serving-gke")
GKE_MIRROR = "us-central1-docker.pkg.dev/my-gpu-project/gpufleet-mirror"  # Artifact Registry, as airgap-gke's
MIRROR = "registry.example.internal:5000/gpufleet"


def _variant(stack: str) -> dict:
    """airgap-eks with Karpenter (and so a NAT: Karpenter without one is refused, gpufleet/base/spec/features/registry_checks.py),
    and the VARIANTS above."""
    if stack == "airgap-eks-karpenter":
        config = example_config("airgap-eks")
        config["gpufleet:cluster"]["eks"]["network"].pop("egress")
        config["gpufleet:cluster"]["eks"]["autoscaler"] = {"kind": "karpenter"}
        for pool in config["gpufleet:nodePools"]:
            pool["minNodes"] = 0  # a Karpenter NodePool has no minimum
            pool.pop("exemptions", None)
        return config
    if stack == "mirror-amd":
        config = example_config("amd-lab")
        config["gpufleet:amdGpuOperator"]["driver"] = {"source": "inbox"}  # the KMM build is refused with a mirror
    elif stack in ("mirror-rdma", "mirror-sriov"):
        config = example_config("lab")
        if stack == "mirror-sriov":
            for pool in config["gpufleet:nodePools"]:
                if pool.get("rdma"):
                    pool["rdmaNetwork"] = {**pool.get("rdmaNetwork", {}), "network": "sriov", "numVfs": 8}
    elif stack == "mirror-amp":  # (airgap-eks itself runs kube-prometheus-stack)
        config = example_config("airgap-eks")
        config["gpufleet:observability"] = {"metrics": {"backend": "amp"}}
        return config  # the ECR mirror of airgap-eks
    elif stack == "mirror-trainer":
        config = example_config("airgap-k3s")
        config["gpufleet:addons"]["jobset"] = {"enabled": False}  # the trainer chart installs its own JobSet
        config["gpufleet:addons"]["trainer"] = {"enabled": True}
        return config
    elif stack == "mirror-cold-start":  # the pre-pull DaemonSet and model-cache Job gpufleet writes
        config = example_config("cold-start-k3s")
        for pool in config["gpufleet:nodePools"]:
            if pool.get("coldStart"):
                pool["coldStart"]["images"] = [f"{MIRROR}/{i}" for i in pool["coldStart"]["images"]]
    elif stack == "mirror-serving-k3s":  # agentgateway and the endpoint picker (issue 52)
        config = example_config("inference-k3s")
    elif stack == "mirror-serving-envoy":  # the same with Envoy Gateway asked for
        config = example_config("inference-k3s")
        config["gpufleet:serving"]["gateway"] = {"className": "envoy"}
    elif stack == "mirror-serving-gke":
        config = example_config("inference-gke")
        config["gpufleet:registry"] = {"mirror": GKE_MIRROR}  # (GKE nodes pull from Artifact Registry only)
        return config
    else:
        assert stack == "mirror-dra", stack
        config = example_config("nvl72-k3s")
    config["gpufleet:registry"] = {"mirror": MIRROR}
    driver = config.setdefault("gpufleet:gpuOperator", {}).setdefault("driver", {})
    if driver.get("source", "operator") == "operator" and not driver.get("precompiled"):
        # The compiling driver container needs the site's package repository behind a mirror (registry_checks).
        driver["repoConfig"] = "local-repo-config"
    return config


_VARIANT_PLANS: dict = {}


def planned(stack: str):
    if stack in ("airgap-k3s", "airgap-eks", "airgap-gke"):
        return _planned(stack)
    if stack not in _VARIANT_PLANS:
        _VARIANT_PLANS[stack] = plan_config(_variant(stack), stack, policies=False)
    return _VARIANT_PLANS[stack]


PUBLIC_HOSTS = ("nvcr.io", "registry.k8s.io", "ghcr.io", "docker.io", "quay.io", "public.ecr.aws", "gcr.io",
                "602401143452.dkr.ecr.", "cr.agentgateway.dev")
PUBLIC = tuple(h if h.endswith(".") else h + "/" for h in PUBLIC_HOSTS)
# A public registry name anywhere in a string: at its start or after `=`, a space, a quote or a comma (an image in a
# flag, `--prometheus-config-reloader=quay.io/...`, or in a list).
_PUBLIC_ANYWHERE = re.compile(r"(?:^|[=\s\"',])(?:" + "|".join(re.escape(h) for h in PUBLIC) + ")")
# Which of these plans write objects with images themselves (node-problem-detector on k3s; DeviceConfigs,
# NicClusterPolicy, ClusterTrainingRuntimes).
OWN_IMAGES = {"airgap-k3s": True, "airgap-eks": False, "airgap-gke": False, "airgap-eks-karpenter": False, "mirror-amd": True,
              "mirror-rdma": True, "mirror-sriov": True, "mirror-amp": False, "mirror-trainer": True,
              "mirror-dra": True, "mirror-cold-start": True, "mirror-serving-k3s": True, "mirror-serving-gke": True}


@pytest.fixture(autouse=True)
def _charts(reference):
    if not CHARTS.is_dir():
        pytest.skip(f"no chart archives under {REFERENCE}")


def _strings(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node


# Charts with no archive of their own in the reference, rendered from the identical chart (same name and version) that
# another reference archive vendors: amp's standalone exporters are kube-prometheus-stack 88.5.3's dependencies
# (its Chart.yaml `dependencies`, ../shared/reference/kube-prometheus-stack/Chart-88.5.3.yaml).
VENDORED = {("kube-state-metrics", "8.4.0"): ("kube-prometheus-stack", "88.5.3"),
            ("prometheus-node-exporter", "4.56.1"): ("kube-prometheus-stack", "88.5.3")}
_EXTRACTED: dict = {}


def chart_path(name: str, version: str):
    """The reference archive of a chart version, else its vendored copy inside another archive (VENDORED), extracted
    once per process and checked to be that very name and version."""
    found = archive(name, version)
    if found is not None or (name, version) not in VENDORED:
        return found
    if (name, version) not in _EXTRACTED:
        import tarfile
        import tempfile
        from pathlib import Path

        import yaml

        parent = archive(*VENDORED[(name, version)])
        target = Path(tempfile.mkdtemp(prefix=f"gpufleet-{name}-"))
        with tarfile.open(parent) as tar:
            prefix = f"{VENDORED[(name, version)][0]}/charts/{name}/"
            tar.extractall(target, members=[m for m in tar.getmembers() if m.name.startswith(prefix)], filter="data")
        path = target / prefix
        meta = yaml.safe_load((path / "Chart.yaml").read_text())
        assert (meta["name"], str(meta["version"])) == (name, version), meta
        _EXTRACTED[(name, version)] = path
    return _EXTRACTED[(name, version)]


def _embedded(objs):
    """The YAML documents a ConfigMap carries as data, next to the objects: a controller's own configuration naming the
    images it starts at run time (Envoy Gateway's envoy-gateway-config: the Envoy proxy, shutdown manager and ratelimit
    images of the pods it creates, envoyproxy/gateway charts/gateway-helm templates/envoy-gateway-config.yaml)."""
    import yaml

    out = []
    for o in objs:
        if o.get("kind") != "ConfigMap":
            continue
        for text in (o.get("data") or {}).values():
            try:
                doc = yaml.safe_load(text)
            except yaml.YAMLError:
                continue
            if isinstance(doc, dict):
                out.append(doc)
    return out


def _applied_crds(r) -> bool:
    return r.type == "kubernetes:yaml/v2:ConfigGroup" and r.name.endswith("-crds")


def _renders(plan):
    out = {}
    for name, version, release, namespace, values in releases(plan):
        chart = chart_path(name, version)
        assert chart is not None, f"{name} {version}: no reference archive"
        objs = template(chart, values, namespace, release=release, kube_version=plan.spec.cluster.kubernetes_version,
                        api_versions=API_VERSIONS)
        out[(name, version)] = objs + _embedded(objs)
    return out


@pytest.mark.parametrize("stack", STACKS + VARIANTS)
def test_no_rendered_image_is_outside_the_mirror(stack):
    plan = planned(stack)
    mirror = plan.spec.registry.mirror
    assert mirror
    for (name, version), objs in _renders(plan).items():
        referenced = {i for o in objs for i in listing.referenced_images(o)}
        if catalog_images.mirror_slots(name, version) == []:  # a chart of CRDs only (agentgateway-crds)
            assert referenced == set(), name
            continue
        assert referenced, f"{name}: no image found in its render"
        outside = sorted(i for i in referenced if not i.startswith(mirror + "/"))
        assert outside == [], f"{name} {version}: images outside the mirror"
        public = sorted({s for o in objs for s in _strings(o) if _PUBLIC_ANYWHERE.search(s)})
        assert public == [], f"{name} {version}: public registry strings left in the render"
    # The objects gpufleet writes itself (DaemonSets, custom resources; the k3s stack's node-problem-detector).
    own = [i for r in plan.resources if r.type.startswith("kubernetes:") and r.type != listing.RELEASE
           for i in listing.referenced_images(r.revealed)]
    assert all(i.startswith(mirror + "/") for i in own), own
    assert bool(own) == OWN_IMAGES[stack]
    # The CRDs gpufleet applies from a chart's archive (components/chart_crds.py, issue 51) are left out: their text is
    # the chart's schema, whose descriptions name registries in examples; no image is pulled from it.
    own_public = sorted({s for r in plan.resources if r.type.startswith("kubernetes:") and r.type != listing.RELEASE
                         and not _applied_crds(r)
                         for s in _strings(r.revealed) if _PUBLIC_ANYWHERE.search(s)})
    assert own_public == []


@pytest.mark.parametrize("stack", STACKS + VARIANTS)
def test_gpufleet_images_lists_exactly_what_the_render_references(stack):
    plan = planned(stack)
    found = listing.image_list(plan)
    assert found.unlisted == []
    def as_rendered(image: str) -> str:
        # A precompiled driver is listed by its real tag pattern, <branch>-<kernel>-<os>; the ClusterPolicy names the
        # branch and the operator completes it on each node (gpufleet/app/images.py PRECOMPILED_NOTE).
        return image.removesuffix("-<kernel>-<os>")

    for (name, version), objs in _renders(plan).items():
        rendered = {i for o in objs for i in listing.referenced_images(o)}
        listed = {as_rendered(i.pull) for i in found.images if i.used_by == f"chart {name} {version}"}
        assert listed == rendered, (name, sorted(listed ^ rendered))
    own = {i for r in plan.resources if r.type.startswith("kubernetes:") and r.type != listing.RELEASE
           for i in listing.referenced_images(r.revealed)}
    assert own <= {i.pull for i in found.images}
    rendered_all = {i for objs in _renders(plan).values() for o in objs for i in listing.referenced_images(o)}
    assert {as_rendered(i.pull) for i in found.images} == rendered_all | own  # nothing listed that nothing uses
    # Each listed pull is the mirror's copy of its source.
    assert all(i.pull == f"{plan.spec.registry.mirror}/{i.source}" for i in found.images)


def test_without_a_mirror_the_list_names_the_public_images():
    """The same list without a mirror: what a mirroring tool reads to fill one (pull == source)."""
    config = example_config("airgap-eks")
    del config["gpufleet:registry"]
    del config["gpufleet:cluster"]["eks"]["network"]["egress"]  # without a mirror, nodes need a NAT
    found = listing.image_list(plan_config(config, "airgap-eks-public", policies=False))
    assert found.images and all(i.pull == i.source and i.source.startswith(PUBLIC) for i in found.images)


def test_the_check_bites():
    """A render with an image left outside the mirror is caught (the GPU Operator without gpufleet's mirror values)."""
    plan = planned("airgap-k3s")
    ((name, version, release, namespace, values),) = [r for r in releases(plan) if r[0] == "gpu-operator"]
    values = dict(values)
    values["toolkit"] = {**values["toolkit"], "repository": "nvcr.io/nvidia/k8s"}
    objs = template(archive(name, version), values, namespace, release=release, kube_version="1.35")
    referenced = {i for o in objs for i in listing.referenced_images(o)}
    assert any(re.match(r"^nvcr\.io/nvidia/k8s/container-toolkit:", i) for i in referenced)


def test_an_image_passed_as_a_flag_is_caught():
    """prometheus-operator starts its config reloader from a flag: without the mirror's reloader block the flag names
    quay.io, and both collectors see it."""
    plan = planned("airgap-eks")
    ((name, version, release, namespace, values),) = [r for r in releases(plan) if r[0] == "kube-prometheus-stack"]
    values = dict(values)
    operator = dict(values["prometheusOperator"])
    operator.pop("prometheusConfigReloader")
    values["prometheusOperator"] = operator
    objs = template(archive(name, version), values, namespace, release=release, kube_version="1.35",
                    api_versions=API_VERSIONS)
    referenced = {i for o in objs for i in listing.referenced_images(o)}
    assert "quay.io/prometheus-operator/prometheus-config-reloader:v0.93.1" in referenced
    assert any(_PUBLIC_ANYWHERE.search(s) and s.startswith("--prometheus-config-reloader=quay.io/")
               for o in objs for s in _strings(o))


def test_gpufleet_made_objects_without_a_mirror_name_public_images():
    """The DeviceConfig, NicClusterPolicy and ClusterTrainingRuntime images move to the mirror only with one: the same
    objects without it name the public registries (so the check on them above can fail)."""
    from gpufleet.base import versions
    from gpufleet.components.gpu_stack import amd_operator, network_operator
    from gpufleet.components.workloads import trainer_runtimes

    plan = planned("mirror-amd")
    pool = next(p for p in plan.spec.node_pools if p.name == "mi300x-cpx")
    public = listing.referenced_images(amd_operator.device_config_spec(pool, plan.spec.amd_gpu_operator))
    mirrored = listing.referenced_images(amd_operator.device_config_spec(pool, plan.spec.amd_gpu_operator, MIRROR))
    assert public == [] and sorted(mirrored) == sorted(f"{MIRROR}/{i}" for i in versions.AMD_DEVICE_CONFIG_IMAGES.values())
    rdma = planned("mirror-rdma")
    args = network_operator.NetworkOperatorArgs(pools=[p for p in rdma.spec.node_pools if p.rdma])
    assert all(i.startswith("nvcr.io/") for i in listing.referenced_images(network_operator.nic_cluster_policy(args)))
    assert all(i.startswith(MIRROR + "/nvcr.io/")
               for i in listing.referenced_images(network_operator.nic_cluster_policy(args, MIRROR)))
    assert not any(i.startswith(MIRROR) for r in trainer_runtimes.runtimes() for i in listing.referenced_images(r))
    assert all(i.startswith(MIRROR + "/") for r in trainer_runtimes.runtimes(MIRROR) for i in listing.referenced_images(r))


def test_envoy_gateway_starts_its_proxies_and_ratelimit_from_the_mirror():
    """The images Envoy Gateway starts at run time come from its EnvoyGateway config (the envoy-gateway-config
    ConfigMap), not from a pod in the render: with the mirror's values the default EnvoyProxy's container, the
    shutdown manager and the ratelimit Deployment name the mirror; the chart's defaults name docker.io (the check bites)."""
    import yaml

    plan = planned("mirror-serving-envoy")
    mirror = plan.spec.registry.mirror
    ((name, version, release, namespace, values),) = [r for r in releases(plan) if r[0] == "gateway-helm"]

    def config(vals):
        objs = template(archive(name, version), vals, namespace, release=release, kube_version="1.36",
                        api_versions=API_VERSIONS)
        (cm,) = [o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "envoy-gateway-config"]
        return yaml.safe_load(cm["data"]["envoy-gateway.yaml"])["provider"]["kubernetes"], cm

    kube, cm = config(values)
    assert kube["rateLimitDeployment"]["container"]["image"] == f"{mirror}/docker.io/envoyproxy/ratelimit:17b1956c"
    assert kube["shutdownManager"]["image"] == f"{mirror}/docker.io/envoyproxy/gateway:v1.9.0"
    proxy = yaml.safe_load(cm["data"]["envoy-gateway.yaml"])["envoyProxy"]["provider"]["kubernetes"]
    assert proxy["envoyDeployment"]["container"]["image"] == f"{mirror}/docker.io/envoyproxy/envoy:distroless-v1.39.0"
    bare = {k: v for k, v in values.items() if k != "global"}
    kube, cm = config(bare)
    assert kube["rateLimitDeployment"]["container"]["image"] == "docker.io/envoyproxy/ratelimit:17b1956c"
    assert "envoyProxy" not in yaml.safe_load(cm["data"]["envoy-gateway.yaml"])  # the controller's built-in proxy image


def test_agentgateway_starts_its_proxies_from_the_mirror():
    """agentgateway's controller starts each Gateway's proxy from AGW_PROXY_IMAGE_REGISTRY / _REPOSITORY (the chart's
    `proxy.image`), which no image field of the render shows: with the mirror's values it names the mirror; the chart's
    defaults name cr.agentgateway.dev (the check bites)."""
    plan = planned("mirror-serving-k3s")
    mirror = plan.spec.registry.mirror
    ((name, version, release, namespace, values),) = [r for r in releases(plan) if r[0] == "agentgateway"]

    def env(vals):
        objs = template(archive(name, version), vals, namespace, release=release, kube_version="1.36")
        (deploy,) = [o for o in objs if o["kind"] == "Deployment"]
        container = deploy["spec"]["template"]["spec"]["containers"][0]
        return container["image"], {e["name"]: e.get("value") for e in container.get("env", [])}

    image, found = env(values)
    assert image == f"{mirror}/cr.agentgateway.dev/controller:v1.4.1"
    assert (found["AGW_PROXY_IMAGE_REGISTRY"], found["AGW_PROXY_IMAGE_REPOSITORY"], found["AGW_PROXY_IMAGE_TAG"]) == (
        f"{mirror}/cr.agentgateway.dev", "agentgateway", "v1.4.1")
    assert found["AGW_ENABLE_INFER_EXT"] == "true"
    image, found = env({"inferenceExtension": {"enabled": True}})
    assert (image, found["AGW_PROXY_IMAGE_REGISTRY"]) == ("cr.agentgateway.dev/controller:v1.4.1", "cr.agentgateway.dev")


def test_model_servers_without_a_mirror_name_the_public_vllm_image():
    """vLLM moves to the mirror only with one: the same LeaderWorkerSet without it names docker.io."""
    from gpufleet.base import versions
    from gpufleet.components.serving.model_server import leader_worker_set

    model = planned("mirror-serving-k3s").spec.serving.models[1]  # deepseek-r1: a leader and workers
    assert set(listing.referenced_images(leader_worker_set(model))) == {versions.VLLM_IMAGE}
    mirrored = f"{MIRROR}/{versions.VLLM_IMAGE}"
    assert set(listing.referenced_images(leader_worker_set(model, image=mirrored))) == {mirrored}


@pytest.mark.parametrize("stack", STACKS + VARIANTS)
def test_the_spec_check_knows_every_chart_the_plan_installs(stack):
    """registry_checks.CHART_KEYS may over-count, never under-count: each chart these plans install is one its
    `installs` predicts from the spec, so a chart without a mirror list is refused before the program runs."""
    from gpufleet.base.spec.features import registry_checks

    plan = planned(stack)
    for name, _version, *_ in releases(plan):
        assert name in registry_checks.STACK_VERSIONED or registry_checks.CHART_KEYS[name].installs(plan.spec), name
