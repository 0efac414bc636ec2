"""How deep and how big the documents gpufleet reads may be: one table, each limit with the margin it leaves.

A stack file, a plan or preview JSON, a kubeconfig and a policy request come from people who may not be the
operator (a pull request's author, a CI artifact). Python's parsers nest one call per level, so a document a
few thousand levels deep ends in a RecursionError (a traceback instead of exit 2), and YAML aliases can repeat a
subtree so often that a few lines expand to billions of values (the "billion laughs"). Every reader refuses
such a document up front with one line naming it, using these limits (docs/security.md ("Inputs gpufleet reads")).
"""

from __future__ import annotations

from typing import Any

STACK_FILE_MAX_DEPTH = 32
"""Maps and lists nested in a stack file (or a kubeconfig), counted from the document itself: the document is
level 1, `config:` level 2, a key's value level 3. The deepest stack in stacks/, examples/ and tests/fixtures
nests 9 (stacks/Pulumi.ai-on-eks.yaml)."""

CONFIG_VALUE_MAX_DEPTH = STACK_FILE_MAX_DEPTH - 2
"""The same limit for one config value as Pulumi hands it to the program (`pulumi up` passes each value as
JSON, without the document and `config:` around it)."""

STACK_FILE_MAX_VALUES = 100_000
"""Values (maps, lists, keys and scalars) in a stack file once its YAML aliases are expanded: each alias counts
the values it repeats. The biggest example stack holds ~160; bench/plan.py's 500-agent k3s stack ~2,600."""

JSON_MAX_DEPTH = 128
"""Maps and lists nested in a plan JSON (`gpufleet plan --format json`), a `pulumi preview --json` document or a
line of its event log. The example stacks' plans nest at most 15 (stacks/Pulumi.dev.yaml), the recorded preview
in tests/fixtures/review 7; a preview of any Pulumi program may carry a CustomResourceDefinition's schema, and
the deepest upstream CRD we keep nests 47 (Kubeflow Trainer's TrainJob,
../shared/reference/crds/trainer/trainer.kubeflow.org_trainjobs.yaml), plus ~5 levels of preview around it."""

POLICY_REQUEST_MAX_DEPTH = 128
"""Maps and lists nested in a request to the policy pack (a resource's properties with the request around
them; AnalyzeStack's list of resources adds one). Deep enough for the CRD above registered as a resource
(`kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition`); protobuf's parser in the pack (upb) has no
depth limit and overflows the C stack at a few thousand levels, which kills the pack (policies/wire_depth.py)."""


NODE_POOLS_MAX = 100
"""Pools in `gpufleet:nodePools`, on every platform. The clouds' own per-cluster limits (read 2026-12-05): AKS "Maximum
node pools per cluster: 100" (learn.microsoft.com/azure/aks/quotas-skus-regions, "Service quotas and limits", a
limit, not a quota); EKS "Managed node groups per cluster: 30", a default quota that is adjustable
(docs.aws.amazon.com/eks/latest/userguide/service-quotas.html; gpufleet cannot see an account's applied value, so it
refuses only past the largest documented limit and leaves 31-100 to the account's quota); GKE's "Quotas and limits"
page (cloud.google.com/kubernetes-engine/quotas) gives per-cluster limits on nodes, nodes per node pool zone and
pods, none on node pools. So 100, the largest per-cluster node pool limit a supported cloud documents, also bounds
the plan (issue 48: 3,000 pools took 183 s and 2 GB; docs/testing.md has the figures within the limit). The example
stacks hold at most 18 pools (stacks/Pulumi.nvl72-k3s.yaml); bench/scale.py plans 25, 50 and 100. A k3s pool is a
group of hosts (no cloud limit applies; hosts per pool are not limited by this), an existing cluster's pools are
facts: the same bound keeps their plans bounded."""


def depth(value: Any) -> int:
    """How many maps and lists nest in `value` (a scalar: 0, `{}` or `[]`: 1), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


# Chart archives `gpufleet plan` reads CRDs from (gpufleet.app.plan.crd_sources). The archive is a file on this
# machine that anyone who can write $GPUFLEET_CHARTS_DIR (or a pull request's CI cache) may have replaced, so it is
# read within these limits; each is measured on the pinned archives in ../shared/reference/charts (2026-12) and
# leaves a wide margin. What goes over a limit is "not validated" (a one-line plan warning), never read further.

CHART_MEMBER_MAX_BYTES = 16 * 1024 * 1024
"""The size of one file read from a chart archive. The biggest file in any pinned archive is 2.6 MB
(AMD's gpu-operator-charts, versions.AMD_GPU_OPERATOR: charts/remediation-crds/crds/cronworkflow-crd.yaml); a CRD must also fit in one etcd
request (etcd's --max-request-bytes, 1.5 MiB by default), so a CRD file is rarely bigger."""

CHART_ARCHIVE_MAX_BYTES = 256 * 1024 * 1024
"""The bytes of an archive's files read through (tar is read in order: a member's data is decompressed to skip it).
The biggest pinned archive unpacks to 23 MB (versions.AMD_GPU_OPERATOR's)."""

CHART_ARCHIVE_MAX_MEMBERS = 10_000
"""Files and folders in one archive (Python's tarfile keeps an entry per member). The most in a pinned archive is
308 (versions.KUBE_PROMETHEUS_STACK's)."""

CRD_YAML_MAX_DEPTH = JSON_MAX_DEPTH
"""Maps and lists nested in a CRD file read from an archive: the deepest pinned CRD nests 47 (Kubeflow Trainer's
TrainJob, see JSON_MAX_DEPTH). The schema walks that follow (gpufleet.app.plan.custom_resources) then stay far from
Python's recursion limit."""

CRD_YAML_MAX_VALUES = 500_000
"""Values in one CRD file once its YAML aliases are expanded (the stack file's count, STACK_FILE_MAX_VALUES). The
most in a pinned CRD file is 64,162 (versions.AMD_GPU_OPERATOR's remediation-crds workflow-crd.yaml, 2.6 MB)."""
