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
