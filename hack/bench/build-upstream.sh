#!/usr/bin/env bash
# Builds the Go upstream core (github.com/lllamnyp/address-controller) for
# `npm run bench`, from a checkout of it:
#
#   bash hack/bench/build-upstream.sh /path/to/address-controller
#   export UPSTREAM_ADDRESS_CONTROLLER=$PWD/.cache/upstream/manager
#
# The module is not served by the Go module proxy, so it cannot be fetched by
# `go install`; its dependencies are. One change, in a copy: the client's rate
# limit is lifted (QPS -1; controller-runtime otherwise sets 20 QPS / 30 burst),
# so the comparison runs both at equal client settings: ours has no limit.
set -euo pipefail
src=${1:?usage: build-upstream.sh <address-controller checkout>}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/.cache/upstream
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src"/. "$work"
grep -q 'ctrl.GetConfigOrDie()' "$work/cmd/main.go" || { echo "build-upstream: $src/cmd/main.go: no ctrl.GetConfigOrDie() call to wrap" >&2; exit 2; }
sed -i 's/ctrl\.GetConfigOrDie()/benchConfig()/' "$work/cmd/main.go"
cat > "$work/cmd/bench_config.go" <<'GO'
package main

import (
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// benchConfig is the manager's config without a client-side rate limit.
func benchConfig() *rest.Config {
	cfg := ctrl.GetConfigOrDie()
	cfg.QPS = -1
	return cfg
}
GO
mkdir -p "$out"
(cd "$work" && CGO_ENABLED=0 go build -trimpath -o "$out/manager" ./cmd)
echo "$out/manager"
