/** API group and version of the IP address resources. */
export const GROUP = 'local.sdn.cozystack.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}` as const;
