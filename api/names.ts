/**
 * Kubernetes' name rules (k8s.io/apimachinery validation), as JSON-schema
 * patterns and as checks: one spelling for the values schemas, the
 * controllers' flags and the names the driver makes.
 */

/** A DNS-1123 label: namespaces, most names. */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** A DNS-1123 subdomain: dotted labels (cluster-scoped custom resources, ServiceAccount names). */
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** A DNS-1035 label: Service names, which must start with a letter. */
export const DNS_1035_LABEL_PATTERN = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
export const DNS_LABEL_MAX = 63;
export const DNS_SUBDOMAIN_MAX = 253;

const label = new RegExp(DNS_LABEL_PATTERN);
const subdomain = new RegExp(DNS_SUBDOMAIN_PATTERN);
const label1035 = new RegExp(DNS_1035_LABEL_PATTERN);

export const isDnsLabel = (name: string) => name.length <= DNS_LABEL_MAX && label.test(name);
export const isDnsSubdomain = (name: string) => name.length <= DNS_SUBDOMAIN_MAX && subdomain.test(name);
export const isServiceName = (name: string) => name.length <= DNS_LABEL_MAX && label1035.test(name);
