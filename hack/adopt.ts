/**
 * `npm run adopt -- …`: the driver's adoption subcommand run from a checkout
 * (controllers/metallb-iad/adopt/command.ts; in a cluster, the chart's
 * `adoption` Job runs the same code from the driver's image).
 */
import { runAdopt } from '../controllers/metallb-iad/adopt/command.js';
import { isMain, runTool } from '../lib/cli.js';

if (isMain(import.meta.url)) {
  runTool('adopt', runAdopt);
}
