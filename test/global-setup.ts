/** Resolves (and on a fresh clone extracts) helm once, before any test file runs. */
import { resolveHelm } from '../hack/helm.js';

export default function setup(): void {
  process.env.HELM = resolveHelm();
}
