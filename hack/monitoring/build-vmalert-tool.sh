#!/usr/bin/env bash
# Builds VictoriaMetrics' vmalert-tool (the `unittest` command vmalert's rules
# are tested with) from its Go module into .cache/tools/, and prints the
# binary's path on stdout. Cached: a second run with the same version does
# nothing. $VMALERT_TOOL, when set to an executable, is printed as is.
#
# v1.151.0 builds with the machine's Go (newer ones need a newer toolchain).
set -euo pipefail

VM_VERSION="${VM_VERSION:-v1.151.0}"

if [[ -n "${VMALERT_TOOL:-}" && -x "${VMALERT_TOOL}" ]]; then
  echo "$VMALERT_TOOL"
  exit 0
fi

root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="$root/.cache/tools/vmalert-tool-$VM_VERSION"
if [[ -x "$tools/vmalert-tool" ]]; then
  echo "$tools/vmalert-tool"
  exit 0
fi
mkdir -p "$tools"
echo "vmalert-tool: building github.com/VictoriaMetrics/VictoriaMetrics/app/vmalert-tool@$VM_VERSION" >&2
# A temporary GOBIN, moved into place whole: a build cut short leaves no binary behind.
tmp="$(mktemp -d "$tools/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS= GOBIN="$tmp" \
  go install -trimpath -ldflags "-s -w" "github.com/VictoriaMetrics/VictoriaMetrics/app/vmalert-tool@$VM_VERSION"
mv "$tmp/vmalert-tool" "$tools/vmalert-tool"
echo "vmalert-tool: done in ${SECONDS}s" >&2
echo "$tools/vmalert-tool"
