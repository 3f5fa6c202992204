#!/usr/bin/env bash
# Builds the tools Cozystack's own checks need, from Go modules only (no website
# downloads), into .cache/tools/: mikefarah yq (hack/lib/image-refs.sh,
# select-install.sh, promote-retag.sh) and helm-unittest, installed as a helm
# plugin under .cache/tools/helm-plugins/unittest. Cached: a second run with the
# same versions does nothing. Prints the tools folder on stdout.
#
# helm-unittest's go.mod carries a replace directive, so `go install mod@v` refuses
# it; it is built from the module's own source in the module cache instead. Its
# plugin.yaml uses platformCommand/platformHooks (an install hook that downloads
# a release binary), so the plugin gets a plain plugin.yaml that helm 3.17 accepts.
set -euo pipefail

YQ_VERSION="${YQ_VERSION:-v4.54.3}"
HELM_UNITTEST_VERSION="${HELM_UNITTEST_VERSION:-v1.1.2}"

root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="$root/.cache/tools/yq-$YQ_VERSION-helm-unittest-$HELM_UNITTEST_VERSION"
plugin="$tools/helm-plugins/unittest"
if [[ -x "$tools/bin/yq" && -x "$plugin/untt" && -f "$plugin/plugin.yaml" ]]; then
  echo "$tools"
  exit 0
fi
mkdir -p "$tools/bin" "$plugin"
export CGO_ENABLED=0 GOTOOLCHAIN=local
log() { echo "conformance tools: [${SECONDS}s] $*" >&2; }

if [[ ! -x "$tools/bin/yq" ]]; then
  log "building mikefarah yq $YQ_VERSION"
  GOBIN="$tools/bin" GOFLAGS= go install -trimpath -ldflags "-s -w" "github.com/mikefarah/yq/v4@$YQ_VERSION"
fi

if [[ ! -x "$plugin/untt" ]]; then
  log "building helm-unittest $HELM_UNITTEST_VERSION from its module source"
  dir="$(GOFLAGS= go mod download -json "github.com/helm-unittest/helm-unittest@$HELM_UNITTEST_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  src="$root/.cache/tools/src-helm-unittest-$HELM_UNITTEST_VERSION"
  rm -rf "$src"
  cp -R "$dir" "$src"
  chmod -R u+w "$src"
  (cd "$src" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$plugin/untt" ./cmd/helm-unittest)
fi
cat >"$plugin/plugin.yaml" <<YAML
name: unittest
version: "${HELM_UNITTEST_VERSION#v}"
usage: "unittest for helm charts"
description: "helm-unittest ${HELM_UNITTEST_VERSION}, built from its Go module by cozy-addresses"
ignoreFlags: false
command: "\$HELM_PLUGIN_DIR/untt"
YAML
log "done in ${SECONDS}s: $tools"
echo "$tools"
