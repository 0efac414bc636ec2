"""Cross checks of gpufleet:observability against the platform and the rest of the stack (which backends a platform
offers, alert routes, AMP workspaces and SNS topics in the stack's region). Called from `_cross_checks` in
gpufleet/base/spec/__init__.py once every block is valid on its own."""

from __future__ import annotations

import re
from typing import Any, Optional

from gpufleet.base import platforms
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.observability import (
    NAMESPACE, AMP_MIN_SCRAPE_SECONDS, AMP_WORKSPACE_ARN, NOTIFICATION_CHANNEL, duration_seconds,
)
from gpufleet.base.spec.stack import StackSpec

_AT = f"{NAMESPACE}:observability"


def check(stack: str, spec: StackSpec, config: Optional[dict[str, Any]] = None) -> list[Problem]:
    """A backend the platform cannot run; amp settings the AWS managed collector refuses."""
    platform = spec.cluster.platform
    metrics = spec.observability.metrics
    chosen = metrics.backend
    allowed = platforms.of(spec).addons.metrics_backends
    if chosen != "auto" and chosen not in allowed:
        return [Problem(stack, f"{_AT}.metrics.backend", f"not available on {platform} (allowed: auto, {', '.join(allowed)})", chosen)]
    problems = []
    backend = spec.observability.backend(platform)
    alerts = spec.observability.alerts
    for key, value, wanted in (("notificationChannels", alerts.notification_channels, "gke-managed"),
                               ("snsTopicArn", alerts.sns_topic_arn, "amp")):
        if value and backend != wanted:
            problems.append(Problem(stack, f"{_AT}.alerts.{key}", f"only used with metrics.backend: {wanted} (the backend is {backend})", value))
        elif value and not alerts.enabled:
            problems.append(Problem(stack, f"{_AT}.alerts.{key}", "no alerts to send: alerts.enabled is false (allowed: remove it, or enable alerts)", value))
    for channel in alerts.notification_channels:
        if not re.match(NOTIFICATION_CHANNEL, channel):
            problems.append(Problem(stack, f"{_AT}.alerts.notificationChannels",
                                    "not a notification channel name (allowed: projects/<project>/notificationChannels/<id>)", channel))
    if alerts.sns_topic_arn and alerts.sns_topic_arn.endswith(".fifo"):
        problems.append(Problem(stack, f"{_AT}.alerts.snsTopicArn",
                                "a FIFO topic: the workspace's alert manager sends to standard SNS topics only (allowed: a standard topic's ARN)",
                                alerts.sns_topic_arn))
    if metrics.amp_workspace_arn is not None and backend != "amp":
        problems.append(Problem(stack, f"{_AT}.metrics.ampWorkspaceArn", f"only used with metrics.backend: amp (the backend is {backend})", metrics.amp_workspace_arn))
    if backend != "amp":
        return problems
    if duration_seconds(metrics.scrape_interval) < AMP_MIN_SCRAPE_SECONDS:
        problems.append(Problem(stack, f"{_AT}.metrics.scrapeInterval",
                                f"the AWS managed collector (amp) scrapes at most every {AMP_MIN_SCRAPE_SECONDS}s (allowed: {AMP_MIN_SCRAPE_SECONDS}s or longer)",
                                metrics.scrape_interval))
    region = (config or {}).get("aws:region")
    if metrics.amp_workspace_arn and region:
        ws_region = re.match(AMP_WORKSPACE_ARN, metrics.amp_workspace_arn).group(1)
        if ws_region != region:
            # The cluster, its scraper and the workspace must share a region (AMP User Guide, Scraper limitations).
            problems.append(Problem(stack, f"{_AT}.metrics.ampWorkspaceArn",
                                    f"the workspace is in {ws_region}, the cluster in {region} (aws:region): the AWS managed collector "
                                    "needs the cluster and the workspace in one region", metrics.amp_workspace_arn))
    return problems
