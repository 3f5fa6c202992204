#!/usr/bin/env bash
# Builds the binaries the end-to-end suite runs, from Go modules only (no
# website downloads), into .cache/e2e/bin-<versions>/. Cached per binary: a
# second run with the same versions does nothing, and a folder from an older
# version of this script gets only what it lacks. Prints the bin folder on stdout.
#
#   kube-apiserver, kube-controller-manager,  from k8s.io/kubernetes (wrapper module:
#   kube-proxy (the data-path suite),         its go.mod pins staging modules at v0.0.0
#   kubelet, kube-scheduler (the node suite)
#                                             with replace directives, so each is mapped
#                                             to its published v0.X.Y release)
#   etcd                                      from go.etcd.io/etcd/server/v3 (same technique)
#   metallb controller, metallb speaker       go.universe.tf/metallb/{controller,speaker}
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.34.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.5}"
METALLB_VERSION="${METALLB_VERSION:-v0.16.1}"

root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/.cache/e2e/bin-kube${KUBE_VERSION}-etcd${ETCD_VERSION}-metallb${METALLB_VERSION}"
KUBE_CMDS=(kube-apiserver kube-controller-manager kube-proxy kubelet kube-scheduler)
METALLB_CMDS=(controller speaker)

# What is not built yet, by name: every later step looks here, so the fast path
# and the steps cannot disagree about what "built" means.
missing() {
  local cmd
  for cmd in "${KUBE_CMDS[@]}" etcd; do [[ -x "$bin/$cmd" ]] || echo "$cmd"; done
  for cmd in "${METALLB_CMDS[@]}"; do [[ -x "$bin/metallb-$cmd" ]] || echo "metallb-$cmd"; done
  [[ -d "$bin/metallb-crds" ]] || echo metallb-crds
}
todo="$(missing)"
if [[ -z "$todo" ]]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$bin"
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

log() { echo "e2e binaries: [${SECONDS}s] $*" >&2; }

build_kube() {
  local src="$root/.cache/e2e/src-kube-$KUBE_VERSION" minor="${KUBE_VERSION#v1.}"
  local staging_version="v0.${minor}"
  mkdir -p "$src"
  log "resolving k8s.io/kubernetes@$KUBE_VERSION"
  local mod
  mod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  {
    echo "module cozy-addresses/e2e-kube"
    echo
    echo "go 1.24"
    echo
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    echo
    # Every staging module the tag pins at v0.0.0 maps to its published release.
    grep -E '^[[:space:]]+k8s\.io/[a-z0-9-]+ v0\.0\.0$' "$mod" | awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
  } >"$src/go.mod"
  cat >"$src/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor%%.*}"
  (cd "$src" && log "go mod tidy (kube)" && go mod tidy -e >/dev/null 2>&1 || true)
  local cmd
  for cmd in "${KUBE_CMDS[@]}"; do
    [[ -x "$bin/$cmd" ]] && continue
    log "building $cmd $KUBE_VERSION (takes minutes on a fresh machine)"
    (cd "$src" && go build -trimpath -ldflags "$ldflags" -o "$bin/$cmd" "k8s.io/kubernetes/cmd/$cmd")
  done
}

build_etcd() {
  local src="$root/.cache/e2e/src-etcd-$ETCD_VERSION"
  mkdir -p "$src"
  printf 'module cozy-addresses/e2e-etcd\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >"$src/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$src/tools.go"
  log "building etcd $ETCD_VERSION"
  (cd "$src" && (go mod tidy -e >/dev/null 2>&1 || true) && go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)
}

build_metallb() {
  local gobin="$root/.cache/e2e/gobin-metallb-$METALLB_VERSION" cmd
  for cmd in "${METALLB_CMDS[@]}"; do
    [[ -x "$bin/metallb-$cmd" ]] && continue
    log "building metallb $cmd $METALLB_VERSION"
    GOBIN="$gobin" GOFLAGS= go install -trimpath -ldflags "-s -w" "go.universe.tf/metallb/$cmd@$METALLB_VERSION"
    cp "$gobin/$cmd" "$bin/metallb-$cmd"
  done
}

# MetalLB's CRDs, from the same module version (no conversion webhook in config/crd/bases).
copy_metallb_crds() {
  local dir
  dir="$(GOFLAGS= go mod download -json "go.universe.tf/metallb@$METALLB_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  mkdir -p "$bin/metallb-crds"
  cp "$dir"/config/crd/bases/metallb.io_*.yaml "$bin/metallb-crds/"
  chmod u+w "$bin"/metallb-crds/*.yaml
}

has() { grep -qx "$1" <<<"$todo"; }
if has kube-apiserver || has kube-controller-manager || has kube-proxy || has kubelet || has kube-scheduler; then build_kube; fi
if has etcd; then build_etcd; fi
if has metallb-controller || has metallb-speaker; then build_metallb; fi
if has metallb-crds; then copy_metallb_crds; fi
if [[ -n "$(missing)" ]]; then
  echo "e2e binaries: still missing after the build: $(missing | tr '\n' ' ')" >&2
  exit 1
fi
log "done in ${SECONDS}s: $bin"
echo "$bin"
