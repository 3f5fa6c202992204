import { VERSION } from '../lib/version.js';

/** Version of this toolchain, its controllers and the upstream charts it writes: package.json's (lib/version.ts). */
export const RELEASE_VERSION: string = VERSION;
