"""node-problem-detector's XID monitor (components/k3s/xid_monitor.py): the config's shape is NPD's, each rule's
pattern matches real-format NVIDIA kernel-log lines of its XID class and nothing else, under NPD's own matching rule.

NPD's rule (kubernetes/node-problem-detector v1.36.0, pkg/systemlogmonitor/log_buffer.go `Match`): the pattern,
compiled by Go's regexp (RE2) with `\\z` appended, is searched in the last `bufferSize` log messages joined by "\\n";
a rule fires when the newest message ends a match. Python's `re` reads the patterns' subset (literals, escaped
parentheses, a negated class, non-capturing alternation, `.*`) as RE2 does, `\\Z` being Python's `\\z`; the subset is
asserted below so a pattern cannot drift into look-around or backreferences (which RE2 rejects), and where a Go
toolchain is installed the same samples run through Go's regexp with NPD's matching rule and must agree.
"""

from __future__ import annotations

import json
import re

import pytest

from gpufleet.base import catalog, labels
from gpufleet.components.k3s import xid_monitor

# Real-format lines. NVIDIA "XID Errors" (docs.nvidia.com/deploy/xid-errors/, "Viewing Xid Error Messages"):
DOC_GPU_LINE = "NVRM: GPU at 0000:03:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7"
DOC_XID_LINE = "NVRM: Xid (0000:03:00): 14, Channel 00000001"
# NVIDIA/open-gpu-kernel-modules src/nvidia/src/kernel/gpu/arch/ampere/kern_gpu_error_cont_ga100.c
# (`_gpuGenerateErrorLog`'s documented formats: with a MIG GPU instance, without, uncontained):
DRIVER_MIG_94 = "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No"
DRIVER_94 = "NVRM: Xid (PCI:0000:01:00): 94, pid=7062, Contained: CE User Channel (0x9). RST: No, D-RST: No"
DRIVER_95 = "NVRM: Xid (PCI:0000:01:00): 95, pid=7062, Uncontained: LTC TAG (0x2, 0x1). RST: Yes, D-RST: No"


def with_xid(line: str, xid: int) -> str:
    """A documented line with its XID number replaced (the format is the same for every XID)."""
    return re.sub(r"\): \d+,", f"): {xid},", line, count=1)


def npd_fires(pattern: str, messages: list[str], buffer_size: int = 10) -> bool:
    """NPD's match: pattern + end-of-text over the newest `buffer_size` messages joined by newlines."""
    return re.search(pattern + r"\Z", "\n".join(messages[-buffer_size:])) is not None


def fired(messages: list[str]) -> set[str]:
    return {r["reason"] for r in xid_monitor.rules() if npd_fires(r["pattern"], messages)}


def codes(rule: dict) -> set[int]:
    return {int(c) for c in re.search(r"\(\?:([0-9|]+)\)", rule["pattern"]).group(1).split("|")}


def test_xids_nvidia_says_need_a_reset_or_restart_set_the_condition_the_rest_only_emit_events():
    """The condition follows NVIDIA's immediate action per XID (the catalog's bucket), not the class: XID 94
    (contained ECC, RESTART_APP) and 63/92 (IGNORE) are memory-class XIDs that must not mark a node broken."""
    seen: list[int] = []
    for rule in xid_monitor.rules():
        for code in codes(rule):
            xid = catalog.xids()[code]
            assert rule["reason"] == xid_monitor.reason(xid.xid_class)
            if rule["type"] == "permanent":
                assert rule["condition"] == labels.GPU_UNHEALTHY_CONDITION and xid.action.severity == "critical", code
            else:
                assert rule["type"] == "temporary" and "condition" not in rule and xid.action.severity != "critical", code
            seen.append(code)
    assert sorted(seen) == sorted(catalog.xids())  # every catalog XID in exactly one rule
    permanent = {c for r in xid_monitor.rules() if r["type"] == "permanent" for c in codes(r)}
    assert {48, 64, 74, 79, 95, 119, 120} <= permanent
    assert not {8, 13, 31, 43, 63, 92, 94} & permanent


@pytest.mark.parametrize("name", sorted(catalog.xid_classes()))
def test_every_catalog_xid_fires_its_own_class_only(name):
    for xid in catalog.xid_classes()[name].xids:
        for line in (with_xid(DOC_XID_LINE, xid), with_xid(DRIVER_94, xid), with_xid(DRIVER_MIG_94, xid)):
            assert fired([DOC_GPU_LINE, line]) == {xid_monitor.reason(name)}, line


def test_the_drivers_own_lines_fire_the_memory_class():
    for line in (DRIVER_MIG_94, DRIVER_94, DRIVER_95):
        assert fired([line]) == {"GpuXidMemory"}
    kinds = {r["type"] for r in xid_monitor.rules() if npd_fires(r["pattern"], [DRIVER_94])}
    assert kinds == {"temporary"}  # 94 contained: NVIDIA RESTART_APP, an event only
    kinds = {r["type"] for r in xid_monitor.rules() if npd_fires(r["pattern"], [DRIVER_95])}
    assert kinds == {"permanent"}  # 95 uncontained: NVIDIA RESET_GPU


def test_lines_that_must_not_fire():
    known = {x for c in catalog.xid_classes().values() for x in c.xids}
    assert 14 not in known and 480 not in known and 7 not in known
    assert fired([DOC_GPU_LINE]) == set()
    assert fired([DOC_XID_LINE]) == set()  # XID 14: not in the catalog
    assert fired([with_xid(DOC_XID_LINE, 480)]) == set()  # 48 is memory; 480 is not 48
    assert fired([with_xid(DRIVER_94, 7)]) == set()  # 79 is bus; 7 is not 79
    assert fired(["Xid 79 mentioned in a user's message"]) == set()
    assert fired(["nvidia-smi: NVRM: Xid (PCI:0000:01:00) 79 without the colon"]) == set()


def test_only_the_newest_line_can_fire_as_in_npd():
    """A broken-GPU line followed by another message no longer matches at the end of NPD's buffer: each line is
    judged when it arrives, so a later unrelated line does not re-fire (or hide) an earlier XID."""
    assert fired([with_xid(DOC_XID_LINE, 79)]) == {"GpuXidBus"}
    assert fired([with_xid(DOC_XID_LINE, 79), "eth0: link up"]) == set()
    assert fired(["eth0: link up", with_xid(DOC_XID_LINE, 79)]) == {"GpuXidBus"}


def test_patterns_stay_in_the_subset_re2_and_python_read_alike():
    for rule in xid_monitor.rules():
        p = rule["pattern"]
        assert not re.search(r"\(\?[=!<]|\\[1-9]|\(\?P", p), p  # no look-around, backreferences or named groups
        assert re.fullmatch(r"[A-Za-z:\\ ()\[\]^)|?0-9,.*]+", p), p


def test_config_has_npd_shape():
    """Keys as NPD's system-log-monitor reads them (pkg/systemlogmonitor/config.go, types/types.go and
    logwatchers/types at v1.36.0); kmsg settings as upstream's config/kernel-monitor.json."""
    config = json.loads(xid_monitor.monitor_json())
    assert set(config) <= {"plugin", "pluginConfig", "logPath", "lookback", "delay", "bufferSize", "source",
                           "conditions", "rules", "metricsReporting"}
    assert (config["plugin"], config["logPath"], config["lookback"], config["bufferSize"]) == ("kmsg", "/dev/kmsg", "5m", 10)
    assert config["conditions"] == [{"type": "GpuUnhealthy", "reason": xid_monitor.HEALTHY_REASON,
                                     "message": config["conditions"][0]["message"]}]
    for rule in config["rules"]:
        assert set(rule) <= {"type", "condition", "reason", "pattern", "patternGeneratedMessageSuffix"}
        re.compile(rule["pattern"])


# NPD's own matching, in Go (pkg/systemlogmonitor/log_buffer.go `Match`: regexp.MustCompile(expr + `\z`) over the
# buffer joined by "\n"), for the cross-check below.
GO_MATCH = r'''package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
)

func main() {
	var in struct {
		Patterns []string   `json:"patterns"`
		Buffers  [][]string `json:"buffers"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	out := make([][]bool, len(in.Patterns))
	for i, p := range in.Patterns {
		re := regexp.MustCompile(p + `\z`)
		out[i] = []bool{}
		for _, b := range in.Buffers {
			out[i] = append(out[i], re.FindStringIndex(strings.Join(b, "\n")) != nil)
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
'''


def test_go_regexp_decides_every_sample_as_python_does(tmp_path):
    """The Python checks above stand for NPD's Go (RE2) matching: where a Go toolchain is installed (the e2e tier
    builds with one), run the same patterns and buffers through Go's regexp and require identical verdicts."""
    import shutil
    import subprocess

    go = shutil.which("go")
    if go is None:
        pytest.skip("no Go toolchain on PATH: the RE2 cross-check needs `go run`")
    patterns = [r["pattern"] for r in xid_monitor.rules()]
    lines = [DOC_GPU_LINE, DOC_XID_LINE, DRIVER_MIG_94, DRIVER_94, DRIVER_95, with_xid(DOC_XID_LINE, 480),
             with_xid(DRIVER_94, 7), "Xid 79 mentioned in a user's message"]
    lines += [with_xid(line, x) for c in catalog.xid_classes().values() for x in c.xids for line in (DOC_XID_LINE, DRIVER_MIG_94)]
    buffers = [[line] for line in lines] + [[with_xid(DOC_XID_LINE, 79), "eth0: link up"], ["eth0: link up", DRIVER_95]]
    (tmp_path / "main.go").write_text(GO_MATCH)
    proc = subprocess.run([go, "run", "main.go"], cwd=tmp_path, input=json.dumps({"patterns": patterns, "buffers": buffers}),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    go_verdicts = json.loads(proc.stdout)
    python_verdicts = [[npd_fires(p, b) for b in buffers] for p in patterns]
    assert go_verdicts == python_verdicts
    assert any(any(row) for row in go_verdicts) and not all(all(row) for row in go_verdicts)
