"""Component tests of the amp metrics backend (gpufleet:eks:ManagedPrometheus) under mocks: children, names,
parents, the scraper's source and destination, its scrape configuration, the alert rules in the workspace, and what
the rest of the stack does differently with amp (GPU Operator, KEDA, no prometheus-operator objects)."""

import yaml

from gpufleet.components.observability.alerts import rule_groups
from gpufleet.components.observability.pools import pool_facts
from gpufleet.base.spec import load_spec
from tests.amp_plan import WORKSPACE_ARN, amp_config, amp_existing_workspace, amp_teams
from gpufleet.app.plan.mocks import eks_cluster_security_group
from gpufleet.testing import mocked_id
from tests.helpers import by_type, one, parent_of
from gpufleet.base import versions
from gpufleet.base.versions import chart_name_of

SCRAPER = "aws:amp/scraper:Scraper"
WORKSPACE = "aws:amp/workspace:Workspace"
RULES = "aws:amp/ruleGroupNamespace:RuleGroupNamespace"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _release(p, chart):
    return next(r for r in by_type(p, RELEASE) if chart_name_of(r.inputs["chart"], r.inputs["version"]) == chart)


def _jobs(p) -> dict:
    config = yaml.safe_load(one(p, SCRAPER).inputs["scrapeConfiguration"])
    return {j["job_name"]: j for j in config["scrape_configs"]}


def test_children_names_and_parents():
    p = amp_teams()
    comp = one(p, "gpufleet:eks:ManagedPrometheus", "teams-eks-amp")
    assert parent_of(p, comp).type == "gpufleet:index:GpuCluster"
    workspace = one(p, WORKSPACE, "teams-eks-amp-workspace")
    scraper = one(p, SCRAPER, "teams-eks-amp-scraper")
    rules = one(p, RULES, "teams-eks-amp-gpu-alerts")
    assert {parent_of(p, r).name for r in (workspace, scraper, rules)} == {"teams-eks-amp"}
    # The scraper tags its destination with AMPAgentlessScraper: set on the workspace, no diff on every up.
    assert workspace.inputs["alias"] == "teams-eks"
    assert workspace.inputs["tags"] == {"gpufleet.io/cluster": "teams-eks", "AMPAgentlessScraper": ""}
    assert rules.inputs["name"] == "gpufleet-gpu-alerts" and rules.inputs["workspaceId"] == mocked_id(workspace)
    # Without kube-prometheus-stack nothing of prometheus-operator's is created (its CRDs are absent).
    assert not [r for r in p.resources if "monitoring.coreos.com" in r.type]
    assert not by_type(p, "gpufleet:observability:Observability")


def test_scraper_reads_the_cluster_from_its_private_subnets_with_the_cluster_security_group():
    p = amp_teams()
    scraper = one(p, SCRAPER)
    cluster = one(p, "aws:eks/cluster:Cluster")
    eks = scraper.inputs["source"]["eks"]
    assert eks["clusterArn"] == "arn:aws:eks:us-east-1:123456789012:cluster/teams-eks"
    private = [mocked_id(r) for r in by_type(p, "aws:ec2/subnet:Subnet") if "private" in r.name]
    assert sorted(eks["subnetIds"]) == sorted(private) and len(eks["subnetIds"]) == 3  # at least two zones
    assert eks["securityGroupIds"] == [eks_cluster_security_group(cluster.name)]
    assert scraper.inputs["destination"] == {"amp": {"workspaceArn": f"arn:aws:aps:us-east-1:123456789012:workspace/{mocked_id(one(p, WORKSPACE))}"}}
    # AMP creates the scraper's access entry itself on an API-mode cluster with private endpoint access (AMP User
    # Guide, AMP-collector-eks-setup): gpufleet adds none of its own for it (one entry per principal).
    assert cluster.inputs["accessConfig"]["authenticationMode"] == "API"
    assert cluster.inputs["vpcConfig"]["endpointPrivateAccess"] is True
    entries = [r.inputs["principalArn"] for r in by_type(p, "aws:eks/accessEntry:AccessEntry")]
    assert entries == ["arn:aws:iam::123456789012:role/platform-admins"]


def test_dcgm_exporter_is_scraped_with_the_workloads_labels_kept():
    jobs = _jobs(amp_teams())
    assert list(jobs) == ["gpu-metrics", "node-exporter", "kube-state-metrics", "kueue", "keda"]
    dcgm = jobs["gpu-metrics"]
    assert dcgm["honor_labels"] is True and dcgm["kubernetes_sd_configs"] == [{"role": "endpoints"}]
    keep = {tuple(r["source_labels"]): r["regex"] for r in dcgm["relabel_configs"] if r.get("action") == "keep"}
    assert keep == {("__meta_kubernetes_service_name",): "nvidia-dcgm-exporter",
                    ("__meta_kubernetes_endpoint_port_name",): "gpu-metrics"}
    # The target's pod label is the exporter pod, as a ServiceMonitor endpoint gets it: the alerts' "allocated"
    # filter (pod!~"nvidia-dcgm-exporter-.*") means the same thing on both backends.
    targets = {r["target_label"]: r["source_labels"] for r in dcgm["relabel_configs"] if "target_label" in r}
    assert targets["pod"] == ["__meta_kubernetes_pod_name"] and targets["namespace"] == ["__meta_kubernetes_namespace"]
    config = yaml.safe_load(one(amp_teams(), SCRAPER).inputs["scrapeConfiguration"])
    assert config["global"] == {"scrape_interval": "30s", "external_labels": {"cluster": "teams-eks"}}


def test_scrape_configuration_stays_within_what_the_collector_accepts():
    """AMP User Guide, Scraper configuration: only kubernetes_sd_configs, Bearer authorization from the service
    account token file, no interval under 30s."""
    p = amp_teams()
    config = yaml.safe_load(one(p, SCRAPER).inputs["scrapeConfiguration"])
    assert set(config) == {"global", "scrape_configs"}
    for job in config["scrape_configs"]:
        assert set(job) <= {"job_name", "honor_labels", "kubernetes_sd_configs", "relabel_configs", "scheme",
                            "authorization", "tls_config"}, job["job_name"]
        assert {c["role"] for c in job["kubernetes_sd_configs"]} <= {"pod", "endpoints", "node", "service"}
        if "authorization" in job:
            assert job["authorization"] == {"type": "Bearer", "credentials_file": "/var/run/secrets/kubernetes.io/serviceaccount/token"}
    kueue = _jobs(p)["kueue"]
    assert kueue["scheme"] == "https" and kueue["tls_config"] == {"insecure_skip_verify": True}


def test_add_on_jobs_follow_the_add_ons():
    """prod-eks has neither Kueue nor KEDA: only the GPU, node-exporter and kube-state-metrics jobs."""
    jobs = _jobs(amp_existing_workspace())
    assert list(jobs) == ["gpu-metrics", "node-exporter", "kube-state-metrics"]
    config = yaml.safe_load(one(amp_existing_workspace(), SCRAPER).inputs["scrapeConfiguration"])
    assert config["global"]["scrape_interval"] == "1m"


def test_alert_rules_in_the_workspace_are_gpufleets_rule_groups():
    p = amp_teams()
    data = yaml.safe_load(one(p, RULES).inputs["data"])
    spec = load_spec("teams-amp", amp_config(), secret_keys=set())
    assert data == {"groups": rule_groups(pool_facts(spec), spec.observability.alerts)}
    every = [r for g in data["groups"] for r in g["rules"]]
    assert all(r["annotations"]["runbook"] and r["annotations"]["runbook_url"] for r in every)
    assert {"GpuXidBusError", "GpuDoubleBitEccError", "GpuAllocatedIdle", "GpuPodsPending", "GpuPoolAtMaximum"} <= {r["alert"] for r in every}


def test_an_existing_workspace_gets_the_scraper_and_the_rules():
    p = amp_existing_workspace()
    assert not by_type(p, WORKSPACE)
    assert one(p, SCRAPER).inputs["destination"] == {"amp": {"workspaceArn": WORKSPACE_ARN}}
    rules = one(p, RULES, "prod-gpu-amp-gpu-alerts")
    assert rules.inputs["workspaceId"] == "ws-1234abcd-5678-ef90-ab12-cdef3456a78"
    idle = [r for g in yaml.safe_load(rules.inputs["data"])["groups"] for r in g["rules"] if r["alert"] == "GpuAllocatedIdle"]
    assert idle and {r["for"] for r in idle} == {"45m"}


def test_gpu_operator_gets_the_counters_but_no_service_monitor():
    values = _release(amp_teams(), "gpu-operator").inputs["values"]["dcgmExporter"]
    assert set(values) == {"enabled", "config"}
    assert values["config"]["name"] == "gpufleet-dcgm-metrics"
    assert "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter" in values["config"]["data"]


def test_keda_opens_its_metrics_ports_without_service_monitors():
    values = _release(amp_teams(), "keda").inputs["values"]
    closed = {"enabled": True, "serviceMonitor": {"enabled": False}}
    assert values["prometheus"] == {"operator": closed, "metricServer": closed}
    assert set(values) == {"prometheus", "podIdentity"}  # the query identity: tests/component/test_keda_managed_prometheus.py
    from gpufleet.components.workloads.keda import KedaArgs, keda_values

    # Off unless asked; an in-cluster Prometheus (prometheus_url) still gets its ServiceMonitors.
    assert keda_values(KedaArgs()) == {}
    assert keda_values(KedaArgs(prometheus_url="http://p:9090", expose_metrics=True))["prometheus"]["operator"]["serviceMonitor"] == {"enabled": True}


def test_collector_is_an_unpriced_hourly_item_and_usage_is_noted():
    cost = amp_teams().cost
    items = [i for i in cost.items if i.kind == "monitoring"]
    assert [(i.name, i.count_min, i.count_max, i.unit_hourly) for i in items] == [
        ("AWS managed collector (Amazon Managed Service for Prometheus) teams-eks", 1, 1, None)]
    assert "aws.amazon.com/prometheus/pricing" in items[0].source and "unpriced" in items[0].source
    assert any("Amazon Managed Service for Prometheus bills metric samples" in n for n in cost.notes)
    # Alerts sent to SNS (alerts.snsTopicArn) are SNS usage; no topic, no note.
    assert any("billed by Amazon SNS per message" in n for n in cost.notes)
    assert not any("Amazon SNS" in n for n in amp_existing_workspace().cost.notes)


def test_gpu_observability_advisory_is_satisfied():
    assert "gpu-observability" not in {v.policy for v in amp_teams().violations}
    assert "gpu-observability" not in {v.policy for v in amp_existing_workspace().violations}


def test_kube_state_metrics_and_node_exporter_run_for_the_collector():
    p = amp_teams()
    comp = one(p, "gpufleet:observability:MetricsExporters", "teams-eks-metrics-exporters")
    assert parent_of(p, comp).type == "gpufleet:index:GpuCluster"
    ns = one(p, "kubernetes:core/v1:Namespace", "teams-eks-metrics-exporters-ns")
    ksm = one(p, RELEASE, "teams-eks-metrics-exporters-kube-state-metrics-release")
    node = one(p, RELEASE, "teams-eks-metrics-exporters-node-exporter-release")
    assert {parent_of(p, r).name for r in (ns, ksm, node)} == {"teams-eks-metrics-exporters"}
    assert ns.inputs["metadata"] == {"name": "monitoring", "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}
    assert (chart_name_of(ksm.inputs["chart"], ksm.inputs["version"]), ksm.inputs["namespace"]) == ("kube-state-metrics", "monitoring")
    assert chart_name_of(node.inputs["chart"], node.inputs["version"]) == "prometheus-node-exporter"
    for r, chart in ((ksm, versions.KUBE_STATE_METRICS), (node, versions.PROMETHEUS_NODE_EXPORTER)):
        # the release asset prometheus-community's index points to, never the gh-pages index itself
        assert (r.inputs["chart"], r.inputs["version"]) == (chart.archive, chart.version) and "repositoryOpts" not in r.inputs
    # The same allowlist as the kube-prometheus-stack path: kube_node_labels{label_gpufleet_io_pool=...}.
    assert ksm.inputs["values"] == {"metricLabelsAllowlist": ["nodes=[gpufleet.io/pool]"]}
    # The scrape jobs find these pods: the charts' name labels and port names.
    jobs = _jobs(p)
    keep = lambda job: {r["source_labels"][0]: r["regex"] for r in jobs[job]["relabel_configs"] if r.get("action") == "keep"}
    assert keep("kube-state-metrics") == {"__meta_kubernetes_pod_label_app_kubernetes_io_name": "kube-state-metrics",
                                          "__meta_kubernetes_pod_container_port_name": "http"}
    assert keep("node-exporter") == {"__meta_kubernetes_pod_label_app_kubernetes_io_name": "prometheus-node-exporter",
                                     "__meta_kubernetes_pod_container_port_name": "metrics|http-metrics"}


def test_no_exporters_without_amp():
    from tests.observability_plan import observed

    assert not by_type(observed(), "gpufleet:observability:MetricsExporters")


def test_review_names_what_a_replaced_workspace_loses():
    from gpufleet.app.review.replacement import data_held

    assert data_held("aws:amp/workspace:Workspace", {"alias": "teams-eks"}).startswith("every metric sample ingested")
    assert data_held("aws:amp/scraper:Scraper", {}) is None  # a collector holds nothing: AMP keeps the samples


ALERT_MANAGER = "aws:amp/alertManagerDefinition:AlertManagerDefinition"


def test_alerts_reach_the_sns_topic_through_the_workspaces_alert_manager():
    """alerts.snsTopicArn: the workspace's alert manager definition, in AMP's format (an `alertmanager_config`
    string), with the one receiver kind AMP has: SNS, SigV4 region set, a short subject (AMP User Guide,
    AMP-alertmanager-config and AMP-alertmanager-receiver-config)."""
    from tests.amp_plan import TOPIC_ARN

    p = amp_teams()
    definition = one(p, ALERT_MANAGER, "teams-eks-amp-alert-manager")
    assert parent_of(p, definition).name == "teams-eks-amp"
    assert definition.inputs["workspaceId"] == mocked_id(one(p, WORKSPACE))
    outer = yaml.safe_load(definition.inputs["definition"])
    assert set(outer) == {"alertmanager_config"} and isinstance(outer["alertmanager_config"], str)
    config = yaml.safe_load(outer["alertmanager_config"])
    assert config == {
        "route": {"receiver": "gpufleet-sns"},
        "receivers": [{"name": "gpufleet-sns", "sns_configs": [{
            "topic_arn": TOPIC_ARN, "sigv4": {"region": "us-east-1"},
            "subject": "[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}"}]}],
    }
    # What AMP refuses in an SNS receiver.
    assert not {"api_url", "http_config"} & set(config["receivers"][0]["sns_configs"][0])


def test_alert_manager_inputs_are_what_pulumi_aws_sends():
    import pulumi_aws as aws

    from tests.policy.test_fixture_shapes import register

    inputs = one(amp_teams(), ALERT_MANAGER).inputs
    assert register(lambda: aws.amp.AlertManagerDefinition(
        "subject", workspace_id=inputs["workspaceId"], definition=inputs["definition"])) == inputs


def test_no_alert_manager_without_a_topic():
    assert not by_type(amp_existing_workspace(), ALERT_MANAGER)
