#!/usr/bin/env bash
# Build the real pieces of the e2e tier from Go modules, once per version (docs/e2e.md).
#
#   tests/e2e/build.sh            build what is missing, then print the tool directory
#   tests/e2e/build.sh --check    exit 1 (and say what) when something is not built yet; build nothing
#
# Every piece is built from a wrapper module under tests/e2e/modules/<piece>/ (go.mod + go.sum pin it) into
# $GPUFLEET_E2E_CACHE (default ~/.cache/gpufleet-e2e)/<piece>-<key>/, where <key> hashes the wrapper's files,
# so a later run, or CI on the same machine, skips it. The assembled layout is $CACHE/current/:
#   bin/      pulumi, pulumi-language-python (+ the SDK's -exec launcher), pulumi-language-yaml, kube-apiserver, etcd
#   home/     a PULUMI_HOME whose plugins/ holds resource-kubernetes-v<version of the Python SDK>
# Each step prints how long it took.
set -euo pipefail
cd "$(dirname "$0")"
E2E_DIR=$(pwd)
REPO=$(cd ../.. && pwd)
CACHE=${GPUFLEET_E2E_CACHE:-$HOME/.cache/gpufleet-e2e}
CHECK=0
[[ "${1:-}" == "--check" ]] && CHECK=1
PY=${PYTHON:-$REPO/.venv/bin/python}
export GOFLAGS="-buildvcs=false -trimpath"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
NICE=(nice -n 10)

log() { printf '[e2e-build] %s\n' "$*" >&2; }

# The Python SDK versions the providers must match (pyproject.toml pins them; .venv has them installed).
sdk_version() { "$PY" -c "import importlib.metadata as m; print(m.version('$1'))"; }
K8S_SDK=$(sdk_version pulumi_kubernetes)
# Versions built (each also in its wrapper go.mod; docs/e2e.md says why each is the one).
modver() { (cd "modules/$1" && go list -m -f "{{.Version}}" "$2"); }  # the version the wrapper selects
PULUMI_VERSION=$(modver pulumi github.com/pulumi/pulumi/pkg/v3)
K8S_VERSION=$(modver kube k8s.io/kubernetes)
YAML_VERSION=$(modver yaml github.com/pulumi/pulumi-yaml)
PY_EXEC=$(go env GOMODCACHE)/github.com/pulumi/pulumi/sdk/v3@$PULUMI_VERSION/python/cmd/pulumi-language-python-exec

key() { # key PIECE: a hash of the wrapper module's files and the toolchain
  (cd "modules/$1" && cat go.mod go.sum $(ls *.go */*.go 2>/dev/null) && go version && echo "$2") | sha256sum | cut -c1-16
}

MISSING=()
step() { # step NAME KEY-EXTRA -- builds into $OUT, skipped when $OUT/.done exists
  local name=$1 extra=$2
  OUT="$CACHE/$name-$(key "$name" "$extra")"
  if [[ -f "$OUT/.done" ]]; then
    log "$name: cached ($OUT)"
    return 1
  fi
  if (( CHECK )); then
    MISSING+=("$name")
    return 1
  fi
  rm -rf "$OUT" && mkdir -p "$OUT"
  log "$name: building into $OUT"
  STARTED=$(date +%s)
  return 0
}
done_step() { touch "$OUT/.done"; log "$1: built in $(( $(date +%s) - STARTED ))s"; }

TOTAL_START=$(date +%s)

# 1. The Pulumi CLI (pkg/v3 and sdk/v3 at one tag).
if step pulumi "$PULUMI_VERSION"; then
  (cd modules/pulumi && go mod download && "${NICE[@]}" go build -o "$OUT/pulumi" \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION" \
    github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
  done_step pulumi
fi
PULUMI_OUT=$OUT

# 2. The Python language host (modules/langhost/go.mod says why it is not the upstream one) and the SDK's
#    launcher it runs programs with, from sdk/v3 at the CLI's tag.
if step langhost "$PULUMI_VERSION"; then
  (cd modules/langhost && go mod download && "${NICE[@]}" go build -o "$OUT/pulumi-language-python" \
    -ldflags "-s -w -X main.version=$PULUMI_VERSION-gpufleet-e2e" .)
  (cd modules/pulumi && go mod download github.com/pulumi/pulumi/sdk/v3@"$PULUMI_VERSION")
  install -m 0755 "$PY_EXEC" "$OUT/pulumi-language-python-exec"
  done_step langhost
fi
LANGHOST_OUT=$OUT

# 3. The kubernetes provider, installed as the version the Python SDK asks for.
if step kubernetes "$K8S_SDK"; then
  (cd modules/kubernetes && go mod download)
  SRC=$(cd modules/kubernetes && go list -m -f '{{.Dir}}' github.com/pulumi/pulumi-kubernetes/provider/v4)
  WORK=$(mktemp -d)
  cp -r modules/kubernetes/. "$WORK/"
  # What the upstream `go generate` (cmd/pulumi-resource-kubernetes/generate.go) writes: the schema with
  # the version set, and the terraform mapping, both re-serialized compactly.
  VERSION=$K8S_SDK "$PY" - "$SRC/cmd/pulumi-resource-kubernetes" "$WORK" <<'EOF'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
schema = json.load(open(os.path.join(src, "schema.json")))
schema["version"] = os.environ["VERSION"]
json.dump(schema, open(os.path.join(out, "schema-embed.json"), "w"), separators=(",", ":"))
mapping = json.load(open(os.path.join(src, "terraform-mapping.json")))
json.dump(mapping, open(os.path.join(out, "terraform-mapping-embed.json"), "w"), separators=(",", ":"))
EOF
  (cd "$WORK" && "${NICE[@]}" go build -o "$OUT/pulumi-resource-kubernetes" \
    -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$K8S_SDK" .)
  rm -rf "$WORK"
  done_step kubernetes
fi
KUBERNETES_OUT=$OUT

# 4. kube-apiserver and etcd (one dependency graph: modules/kube/go.mod).
if step kube "$K8S_VERSION"; then
  MINOR=$(echo "$K8S_VERSION" | cut -d. -f2)
  KV=k8s.io/component-base/version
  (cd modules/kube && go mod download && "${NICE[@]}" go build -o "$OUT/kube-apiserver" \
    -ldflags "-s -w -X $KV.gitVersion=$K8S_VERSION -X $KV.gitMajor=1 -X $KV.gitMinor=$MINOR -X $KV.gitTreeState=clean" \
    k8s.io/kubernetes/cmd/kube-apiserver \
   && "${NICE[@]}" go build -o "$OUT/etcd" -ldflags "-s -w" ./etcd)
  done_step kube
fi
KUBE_OUT=$OUT

# 5. The Pulumi YAML language host: upstream's server with the `Link` method `pulumi package add` needs
#    (modules/yaml/host/main.go says why). Only the YAML test needs it: a failure here is reported, and that
#    test skips saying so, while the rest of the tier runs.
if step yaml "$YAML_VERSION"; then
  if (cd modules/yaml && go mod download && "${NICE[@]}" go build -o "$OUT/pulumi-language-yaml" \
      -ldflags "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=$YAML_VERSION" ./host); then
    done_step yaml
  else
    log "yaml: BUILD FAILED (the YAML test will skip); the error is above"
  fi
fi
YAML_OUT=$OUT

if (( CHECK )) && (( ${#MISSING[@]} )); then
  log "not built yet: ${MISSING[*]} (run tests/e2e/build.sh)"
  exit 1
fi

# Assemble $CACHE/current (symlinks into the keyed directories).
CUR="$CACHE/current"
rm -rf "$CUR.new" && mkdir -p "$CUR.new/bin" "$CUR.new/home/plugins/resource-kubernetes-v$K8S_SDK"
for f in "$PULUMI_OUT/pulumi" "$LANGHOST_OUT"/pulumi-language-python* "$KUBE_OUT/kube-apiserver" "$KUBE_OUT/etcd"; do
  ln -s "$f" "$CUR.new/bin/$(basename "$f")"
done
[[ -f "$YAML_OUT/.done" ]] && ln -s "$YAML_OUT/pulumi-language-yaml" "$CUR.new/bin/pulumi-language-yaml"
ln -s "$KUBERNETES_OUT/pulumi-resource-kubernetes" "$CUR.new/home/plugins/resource-kubernetes-v$K8S_SDK/"
cat > "$CUR.new/versions.env" <<EOF
PULUMI_VERSION=$PULUMI_VERSION
KUBERNETES_PROVIDER_VERSION=$K8S_SDK
KUBERNETES_VERSION=$K8S_VERSION
PULUMI_YAML_VERSION=$YAML_VERSION
EOF
rm -rf "$CUR" && mv "$CUR.new" "$CUR"
log "tools ready in $CUR ($(( $(date +%s) - TOTAL_START ))s)"
echo "$CUR"
