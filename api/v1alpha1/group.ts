/** API group and version of the IP address resources. */
export const GROUP = 'local.sdn.cozystack.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/**
 * The category of the three kinds: `kubectl get ipam` lists them all. No
 * built-in resource or Cozystack CRD uses it (test/e2e/platform.test.ts checks
 * the apiserver's discovery); nor their short names ipaddr, ipclaim, ipclass,
 * which also keep clear of kube-ovn's ip/ippool and Cilium's ippool(s).
 */
export const ADDRESS_CATEGORY = 'ipam';
