/**
 * The sandbox ("pause") image containerd starts first in every Pod: no
 * registry outside this machine is reachable, so the suite builds its own from
 * a few lines of Go (static, cached under .cache/e2e/) and pushes it to the
 * e2e registry. All it does is what upstream's pause does for a Pod without a
 * shared PID namespace: hold the Pod's namespaces and exit on SIGTERM/SIGINT.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pushLayout } from '../../../lib/oci/push.js';
import { ociImage } from '../../../hack/images/oci-image.js';
import { writeLayout } from '../../../hack/images.js';
import { REPO_ROOT } from '../../support/synth.js';

const SOURCE = `package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}
`;

export const PAUSE_REPOSITORY = 'e2e/pause';
export const PAUSE_TAG = '1';

function pauseBinary(): string {
  const dir = join(REPO_ROOT, '.cache', 'e2e', 'pause');
  const binary = join(dir, 'pause');
  if (existsSync(binary) && existsSync(join(dir, 'main.go')) && readFileSync(join(dir, 'main.go'), 'utf8') === SOURCE) {
    return binary;
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'go.mod'), 'module cozy-addresses/e2e-pause\n\ngo 1.24\n');
  writeFileSync(join(dir, 'main.go'), SOURCE);
  execFileSync('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', binary, '.'], {
    cwd: dir,
    env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return binary;
}

/** Builds the pause image and pushes it to `registry` (host:port, plain HTTP) as e2e/pause:1. */
export async function pushPauseImage(registry: string): Promise<void> {
  const image = ociImage(
    [[{ type: 'file', path: 'pause', content: readFileSync(pauseBinary()), mode: 0o755 }]],
    { user: '65535:65535', entrypoint: ['/pause'], cmd: [], workingDir: '/', env: [], exposedPorts: [], labels: {} },
    PAUSE_TAG,
  );
  const dir = mkdtempSync(join(tmpdir(), 'e2e-pause-'));
  try {
    writeLayout(join(dir, 'pause'), image);
    await pushLayout(join(dir, 'pause'), { registry, repository: PAUSE_REPOSITORY, tag: PAUSE_TAG, plainHttp: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
