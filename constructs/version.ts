/** Version of this toolchain, its controllers and the upstream charts it writes (package.json `version`). */
export const RELEASE_VERSION = '0.1.0';
