"""The GitHub workflows: linted (zizmor for security, the workflow JSON Schema, actionlint where installed),
third-party actions pinned by commit SHA, least-privilege permissions, and the review wiring."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
BIN = Path(sys.executable).parent
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def tool(name: str) -> str:
    found = BIN / name if (BIN / name).exists() else shutil.which(name)
    if not found:
        pytest.skip(
            f"{name} is not installed (pip install -e '.[dev]'; actionlint comes from the '.[actionlint]' extra, "
            "whose installer downloads the binary from GitHub: the PR workflow has it, this machine cannot)"
        )
    return str(found)


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def steps(doc: dict):
    for job in doc["jobs"].values():
        yield from job.get("steps", [])


def test_the_workflows_exist():
    assert [p.name for p in FILES] == ["catalog-refresh.yml", "deploy.yml", "fleet.yml", "pr.yml", "preview.yml"]


def test_catalog_refresh_is_off_by_default_and_only_checks():
    doc = load(WORKFLOWS / "catalog-refresh.yml")
    assert set(doc[True]) == {"schedule", "workflow_dispatch"}
    job = doc["jobs"]["check"]
    assert job["if"] == "vars.GPUFLEET_CATALOG_REFRESH == 'true'"  # nothing runs until a team turns it on
    assert job["environment"] == "catalog-refresh"
    run = "\n".join(s.get("run", "") for s in job["steps"])
    assert "pip install -q -e '.[catalog]'" in run
    assert 'gpufleet catalog refresh "${args[@]}" --check' in run


def test_zizmor_pedantic_finds_nothing():
    # --offline: no GitHub API (the SHA <-> tag comments were checked by hand against each action's tags).
    # --pedantic: code smells too (issue 31: the workflows stay clean at that level).
    run = subprocess.run([tool("zizmor"), "--offline", "--pedantic", "--no-progress", *map(str, FILES)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "No findings to report" in run.stdout + run.stderr


def test_workflows_match_the_github_workflow_schema():
    run = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, FILES)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_actionlint_finds_nothing():
    run = subprocess.run([tool("actionlint"), *map(str, FILES)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_third_party_actions_are_pinned_by_full_sha_with_the_tag_in_a_comment(path):
    text = path.read_text()
    uses = [s["uses"] for s in steps(load(path)) if "uses" in s]
    assert uses
    for ref in uses:
        assert PINNED.match(ref), f"{path.name}: {ref} is not pinned to a full commit SHA"
        assert re.search(re.escape(ref) + r" # v\d", text), f"{path.name}: {ref} has no '# vX' tag comment"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_permissions_are_least_privilege(path):
    doc = load(path)
    assert doc["permissions"] == {}, "the workflow grants nothing by default"
    allowed = {"contents": {"read"}, "pull-requests": {"write"}, "id-token": {"write"}}
    for name, job in doc["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name} must say what it needs"
        if (path.name, name) == ("fleet.yml", "record"):
            continue  # its one write scope: test_fleet_records_the_deployed_commit_after_a_clean_up
        for scope, level in job["permissions"].items():
            assert level in allowed.get(scope, set()), f"{path.name}: job {name} asks for {scope}: {level}"
        steps_ = job.get("steps", [])
        checkouts = [s for s in steps_ if s.get("uses", "").startswith("actions/checkout@")]
        assert all(s["with"]["persist-credentials"] is False for s in checkouts)


def test_pr_review_plans_base_and_head_and_updates_one_comment_per_stack():
    doc = load(WORKFLOWS / "pr.yml")
    assert list(doc[True]) == ["pull_request"]  # never pull_request_target: it runs the PR's code
    review = doc["jobs"]["review"]
    script = "\n".join(s.get("run", "") for s in review["steps"])
    assert 'git worktree add --detach "$RUNNER_TEMP/base" "$BASE_SHA"' in script
    assert 'gpufleet" plan --all --jobs 2 --format json --output "$RUNNER_TEMP/base.json"' in script
    assert 'gpufleet plan --all --jobs 2 --format json --output "$RUNNER_TEMP/head.json"' in script
    assert 'gpufleet diff "$RUNNER_TEMP/base.json" "$RUNNER_TEMP/head.json" --format markdown --output-dir review' in script
    # the rendered comments go to the comment job as an artifact; that job posts them, one per stack, updated in place
    upload = next(s for s in review["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["name"] == "review" and upload["with"]["path"] == "review/"
    job = doc["jobs"]["comment"]
    assert job["needs"] == "review" and "needs.review.outputs.rendered == 'true'" in job["if"]
    comment = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/github-script@"))
    assert "updateComment" in comment["with"]["script"] and "createComment" in comment["with"]["script"]
    # the comment is found by the marker its file name gives, which the body must start with
    assert "const marker = `<!-- gpufleet-review:${stack}${suffix} -->`;" in comment["with"]["script"]
    assert comment["env"]["MARKER_SUFFIX"] == ""
    assert review["steps"][-1]["if"] == "steps.review.outputs.failed != ''"
    assert "python -m pytest" in "\n".join(s.get("run", "") for s in doc["jobs"]["test"]["steps"])


def test_preview_runs_only_with_credentials_and_feeds_gpufleet_report():
    doc = load(WORKFLOWS / "preview.yml")
    assert "vars.PULUMI_PREVIEW == 'true'" in doc["jobs"]["stacks"]["if"]
    assert "head.repo.full_name == github.repository" in doc["jobs"]["stacks"]["if"]
    run = "\n".join(s.get("run", "") for s in doc["jobs"]["preview"]["steps"])
    assert "--policy-pack policies --json" in run and '--event-log "$RUNNER_TEMP/events.jsonl"' in run
    assert 'gpufleet report --preview-json "$RUNNER_TEMP/preview.json" --event-log' in run
    # the credentials wait for the `preview` environment's required reviewers; the comment is posted elsewhere
    assert doc["jobs"]["preview"]["environment"] == "preview"
    comment = next(s for s in doc["jobs"]["comment"]["steps"] if s.get("uses", "").startswith("actions/github-script@"))
    assert comment["env"]["MARKER_SUFFIX"] == ":preview"


def test_deploy_runs_up_per_environment_with_the_policy_pack():
    doc = load(WORKFLOWS / "deploy.yml")
    assert doc[True] == {"push": {"branches": ["main"]}}
    up = doc["jobs"]["up"]
    assert up["environment"] == "${{ matrix.stack }}" and up["strategy"]["max-parallel"] == 1
    pulumi = next(s for s in up["steps"] if s.get("uses", "").startswith("pulumi/actions@"))
    assert pulumi["with"]["command"] == "up" and pulumi["with"]["policyPacks"] == "policies"
    assert doc["concurrency"]["cancel-in-progress"] is False


def test_fleet_previews_changed_stacks_in_shards_and_updates_them_on_main_behind_an_environment():
    doc = load(WORKFLOWS / "fleet.yml")
    assert doc[True] == {"pull_request": None, "push": {"branches": ["main"]}}
    changed = doc["jobs"]["changed"]
    # off by default, and never beside preview.yml / deploy.yml (no stack previewed or deployed twice)
    for switch in ("vars.GPUFLEET_FLEET == 'true'", "vars.PULUMI_PREVIEW != 'true'", "vars.PULUMI_DEPLOY != 'true'",
                   "github.event.pull_request.head.repo.full_name == github.repository"):
        assert switch in changed["if"]
    assert changed["permissions"] == {"contents": "read"} and "environment" not in changed
    script = next(s["run"] for s in changed["steps"] if s.get("id") == "changed")
    assert 'gpufleet preview --changed-since "$base" --list --format json' in script
    preview = doc["jobs"]["preview"]
    assert preview["environment"] == "preview" and preview["strategy"]["matrix"]["shard"] == \
        "${{ fromJSON(needs.changed.outputs.shards) }}"
    run = "\n".join(s.get("run", "") for s in preview["steps"])
    assert 'gpufleet preview --changed-since "$BASE" --shard "$SHARD" --parallel 2 --policy-pack policies' in run
    up = doc["jobs"]["up"]
    assert up["environment"] == "fleet" and "github.ref == 'refs/heads/main'" in up["if"]
    assert up["concurrency"] == {"group": "deploy", "cancel-in-progress": False}  # deploy.yml's group
    run = "\n".join(s.get("run", "") for s in up["steps"])
    assert 'gpufleet up "${select[@]}" --yes --parallel 1 --policy-pack policies' in run
    for job in (preview, up):  # every checkout fetches the history --changed-since compares with
        assert all(s["with"]["fetch-depth"] == 0 for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))


PUSH_TO_MAIN = "github.event_name == 'push' && github.ref == 'refs/heads/main'"


def test_fleet_deploys_what_changed_since_the_last_deployed_commit():
    """issue 48: a push selects what changed since the gpufleet-deployed tag (the last commit every stack was deployed
    at), so a cancelled or failed run leaves nothing behind unnoticed; the push's own base goes to --pushed-since."""
    doc = load(WORKFLOWS / "fleet.yml")
    script = next(s["run"] for s in doc["jobs"]["changed"]["steps"] if s.get("id") == "changed")
    assert 'deployed=$(git rev-parse -q --verify "refs/tags/gpufleet-deployed^{commit}" || true)' in script
    assert 'git merge-base --is-ancestor "$deployed" HEAD' in script and 'base="$deployed"' in script
    assert 'base="${PR_BASE:-$PUSH_BEFORE}"' not in script  # the previous push is not what was deployed
    up = "\n".join(s.get("run", "") for s in doc["jobs"]["up"]["steps"])
    assert 'select=(--changed-since "$BASE" --pushed-since "$PUSHED")' in up


def test_fleet_records_the_deployed_commit_after_a_clean_up():
    record = load(WORKFLOWS / "fleet.yml")["jobs"]["record"]
    assert record["needs"] == "up" and record["if"] == f"{PUSH_TO_MAIN} && needs.up.result == 'success'"
    assert record["permissions"] == {"contents": "write"} and "environment" not in record
    (step,) = record["steps"]  # no checkout, no action: nothing from the repository runs with the write token
    assert set(step) == {"name", "env", "run"}
    commands = {line.split()[0] for line in step["run"].splitlines() if line.strip() and "gh api" in line}
    assert commands <= {"old=$(gh", "gh", "status=$(gh"}
    assert all("gpufleet-deployed" in line or "compare" in line for line in step["run"].splitlines() if "gh api" in line)
    assert '"$status" != "ahead"' in step["run"]  # forward only: a late run never moves it back


def test_fleet_shards_cover_the_changed_stacks(tmp_path):
    script = next(s["run"] for s in load(WORKFLOWS / "fleet.yml")["jobs"]["changed"]["steps"] if s.get("id") == "changed")
    py = script.split("<<'PY'\n", 1)[1].split("\nPY", 1)[0]
    listing = tmp_path / "changed.json"
    for stacks, shards in ((["a", "b", "c", "d", "e", "f"], ["1/4", "2/4", "3/4", "4/4"]), (["a", "b"], ["1/2", "2/2"]),
                           ([], [])):
        listing.write_text(__import__("json").dumps({"stacks": stacks}))
        out = tmp_path / "out"
        out.write_text("")
        subprocess.run([sys.executable, "-c", py, str(listing)], check=True, capture_output=True,
                       env={"GITHUB_OUTPUT": str(out), "MAX_SHARDS": "4"})
        assert out.read_text() == f"shards={__import__('json').dumps(shards)}\ncount={len(shards)}\n"


# -- issue 31: what pull-request code can reach ------------------------------------------------------------------
# A `pull_request` run executes the pull request's code wherever a job checks it out and runs it; such jobs must
# hold nothing worth stealing. Jobs that can write (pull-requests: write) run no code from the pull request, and
# every job that gets credentials (OIDC or secrets) waits for a GitHub environment and its required reviewers.

PR_WORKFLOWS = [p for p in FILES if "pull_request" in load(p)[True]]
ALLOWED_IN_WRITING_JOBS = ("actions/download-artifact@", "actions/github-script@")


def jobs(path: Path):
    for name, job in load(path)["jobs"].items():
        yield name, job


def writes(job: dict) -> set[str]:
    return {scope for scope, level in (job.get("permissions") or {}).items() if level == "write"}


def test_pull_request_workflows_use_no_privileged_trigger():
    assert [p.name for p in PR_WORKFLOWS] == ["fleet.yml", "pr.yml", "preview.yml"]
    for path in FILES:
        triggers = set(load(path)[True])
        # pull_request_target and workflow_run run with the base repository's token and secrets
        assert not triggers & {"pull_request_target", "workflow_run"}, path.name


@pytest.mark.parametrize("path", PR_WORKFLOWS, ids=lambda p: p.name)
def test_no_job_that_can_write_runs_pull_request_code(path):
    writers = 0
    for name, job in jobs(path):
        if not writes(job) - {"id-token"}:
            continue
        if PUSH_TO_MAIN in job.get("if", ""):
            continue  # never runs on a pull request (fleet.yml record: checked on its own below)
        writers += 1
        assert writes(job) == {"pull-requests"}, f"{path.name}: {name} writes more than comments"
        for step in job["steps"]:
            assert "run" not in step, f"{path.name}: {name} runs a shell step"
            assert step.get("uses", "").startswith(ALLOWED_IN_WRITING_JOBS), f"{path.name}: {name} uses {step.get('uses')}"
            script = (step.get("with") or {}).get("script", "")
            for word in ("child_process", "eval(", "Function(", "require(`", "import("):
                assert word not in script, f"{path.name}: {name} could run what it downloaded ({word})"
            assert set(re.findall(r"require\('([^']+)'\)", script)) <= {"fs", "path"}
            assert "${{" not in script  # values reach the script through env, never spliced into its code
    # fleet.yml writes its summary to the job summary, not to the pull request
    assert writers == (0 if path.name == "fleet.yml" else 1), f"{path.name}: exactly one job comments"


@pytest.mark.parametrize("path", PR_WORKFLOWS, ids=lambda p: p.name)
def test_jobs_that_run_pull_request_code_hold_a_read_only_token(path):
    for name, job in jobs(path):
        checks_out = any(s.get("uses", "").startswith("actions/checkout@") for s in job.get("steps", []))
        if checks_out:
            assert writes(job) <= {"id-token"}, f"{path.name}: {name} runs the pull request's code with {writes(job)}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_jobs_with_credentials_wait_for_an_environment(path):
    for name, job in jobs(path):
        text = yaml.safe_dump(job)
        secrets = set(re.findall(r"secrets\.(\w+)", text)) - {"GITHUB_TOKEN"}
        if "id-token" in writes(job) or secrets:
            assert job.get("environment"), f"{path.name}: {name} gets credentials without an environment"
            assert not writes(job) - {"id-token"}, f"{path.name}: {name} mixes credentials and write access"


def test_the_preview_credentials_wait_for_the_preview_environment():
    doc = load(WORKFLOWS / "preview.yml")
    assert doc["jobs"]["preview"]["environment"] == "preview"
    assert [n for n, j in doc["jobs"].items() if j.get("environment")] == ["preview"]


def comment_scripts() -> dict[str, str]:
    out = {}
    for path in PR_WORKFLOWS:
        for name, job in jobs(path):
            for step in job.get("steps", []):
                if step.get("uses", "").startswith("actions/github-script@"):
                    out[path.name] = step["with"]["script"]
    return out


def test_both_workflows_post_with_the_same_script_and_gpufleets_stack_name_rule():
    from gpufleet.app.review.summary import RESERVED, STACK_NAME

    scripts = comment_scripts()
    assert set(scripts) == {"pr.yml", "preview.yml"} and scripts["pr.yml"] == scripts["preview.yml"]
    assert f"const NAME = /^{STACK_NAME.pattern}\\.md$/;" in scripts["pr.yml"]
    for path in ("preview.yml", "deploy.yml"):  # the stack lists that name jobs, environments, artifacts
        text = (WORKFLOWS / path).read_text()
        assert f're.fullmatch(r"{STACK_NAME.pattern}", n)' in text
        assert 'n.lower() not in ("fleet", ".", "..")' in text and RESERVED == {"fleet", ".", ".."}


FAKE_GITHUB = """
const calls = [];
const existing = JSON.parse(process.env.EXISTING);
const github = {
  paginate: async (fn, args) => { calls.push(['list', args.issue_number]); return existing; },
  rest: { issues: {
    listComments: 'listComments',
    updateComment: async (a) => calls.push(['update', a.comment_id, a.body.split('\\n', 1)[0]]),
    createComment: async (a) => calls.push(['create', a.issue_number, a.body.split('\\n', 1)[0]]),
  } },
};
const context = { repo: { owner: 'o', repo: 'r' }, payload: { pull_request: { number: 7 } } };
const core = { warning: (m) => calls.push(['warning', m]) };
(async () => {
%s
})().then(() => console.log(JSON.stringify(calls)), (e) => { console.error(e); process.exit(1); });
"""


def run_comment_script(tmp_path: Path, files: dict[str, str], existing: list, suffix: str = "") -> list:
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed: the comment script is JavaScript (actions/github-script runs it on node)")
    import json

    review = tmp_path / "review"
    review.mkdir()
    for name, body in files.items():
        (review / name).write_text(body)
    (review / "sub.md").mkdir()  # a directory named like a comment
    (review / "link.md").symlink_to(review / "fleet.md")  # a link, even to a good file
    script = tmp_path / "run.js"
    script.write_text(FAKE_GITHUB % comment_scripts()["pr.yml"])
    env = {"PATH": "/usr/bin:/bin", "REVIEW_DIR": str(review), "MARKER_SUFFIX": suffix, "EXISTING": json.dumps(existing)}
    run = subprocess.run([node, str(script)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_comment_script_posts_each_file_only_as_its_own_stacks_comment(tmp_path):
    m = lambda s: f"<!-- gpufleet-review:{s} -->"  # noqa: E731
    files = {
        "fleet.md": m("fleet") + "\nsummary",
        "dev.md": m("dev") + "\nupdated",
        "prod.md": m("dev") + "\ntakes dev's comment",  # another stack's marker: refused
        "lab.md": "no marker\n" + m("lab"),
        "big.md": m("big") + "\n" + "x" * 70_000,  # longer than a GitHub comment
        "a b.md": m("a b") + "\n",
        "..md": m(".") + "\n",
        "notes.txt": m("notes") + "\n",
    }
    existing = [{"id": 1, "user": {"login": "github-actions[bot]", "type": "Bot"}, "body": m("dev") + "\nold"},
                {"id": 2, "user": {"login": "mallory", "type": "User"}, "body": m("fleet") + "\nplanted"},
                {"id": 3, "user": {"login": "other[bot]", "type": "Bot"}, "body": m("fleet") + "\nplanted"}]
    calls = run_comment_script(tmp_path, files, existing)
    posted = [c for c in calls if c[0] in ("create", "update")]
    assert posted == [["update", 1, m("dev")], ["create", 7, m("fleet")]]  # never into someone else's comment
    warnings = [c[1] for c in calls if c[0] == "warning"]
    assert len(warnings) == 8  # "..md", "a b.md", big, lab, link, notes.txt, prod, sub.md
    assert all("\n" not in w for w in warnings)


def test_the_comment_script_uses_the_preview_markers_in_the_preview_workflow(tmp_path):
    files = {"dev.md": "<!-- gpufleet-review:dev:preview -->\nx", "fleet.md": "<!-- gpufleet-review:dev -->\nx"}
    (tmp_path / "pr").mkdir()
    (tmp_path / "preview").mkdir()
    calls = run_comment_script(tmp_path / "pr", files, [])  # pr.yml's suffix: "", so neither file fits
    assert [c for c in calls if c[0] in ("create", "update")] == []
    calls = run_comment_script(tmp_path / "preview", files, [], suffix=":preview")
    assert [c for c in calls if c[0] in ("create", "update")] == [["create", 7, "<!-- gpufleet-review:dev:preview -->"]]


def list_stacks(workflow: str, tmp_path: Path, names: list[str]) -> tuple[int, str, str]:
    run = next(s["run"] for s in load(WORKFLOWS / workflow)["jobs"]["stacks"]["steps"] if s.get("id") == "list")
    (tmp_path / "stacks").mkdir()
    for n in names:
        (tmp_path / "stacks" / f"Pulumi.{n}.yaml").write_text("config: {}\n")
    output = tmp_path / "github_output"
    output.write_text("")
    result = subprocess.run(["bash", "-e", "-c", run], cwd=tmp_path, capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "GITHUB_OUTPUT": str(output)})
    return result.returncode, result.stdout, output.read_text()


BAD = ["fleet", "Fleet", "a b", 'x"y', "a$(id)", "x-->", "@someone", ".."]


def test_preview_lists_only_stacks_whose_names_are_safe_to_use(tmp_path):
    code, out, github_output = list_stacks("preview.yml", tmp_path, ["dev", "prod-eks", "a.b_c", *BAD])
    assert code == 0 and github_output == 'stacks=["a.b_c", "dev", "prod-eks"]\n'
    assert out == f"::warning::{len(BAD)} stack file(s) skipped: their names break the stack name rule\n"


def test_deploy_refuses_to_start_with_a_stack_name_that_breaks_the_rule(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "good").mkdir()
    code, out, github_output = list_stacks("deploy.yml", tmp_path / "bad", ["dev", "x-->"])
    assert code == 1 and github_output == "" and out.startswith("::error::1 stack file(s) break the stack name rule")
    code, _, github_output = list_stacks("deploy.yml", tmp_path / "good", ["dev", "prod-eks"])
    assert code == 0 and github_output == 'stacks=["dev", "prod-eks"]\n'
