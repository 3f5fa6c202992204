/**
 * Who the platform trusts to write on tenants' behalf, as the package
 * policies' values name them and as CEL reads them: Cozystack's own
 * `trustedCaller` set by default (packages/system/cozystack-basics).
 */
import { Type } from '@sinclair/typebox';
import { DNS_LABEL_MAX, DNS_LABEL_PATTERN, DNS_SUBDOMAIN_MAX, DNS_SUBDOMAIN_PATTERN } from '../../api/names.js';
import { Helm, Pipeline, type HelmOperand } from '../helm/expr.js';

/**
 * A username or group as the apiserver compares it: exactly, so leading or
 * trailing blanks (a copy-paste slip) would match nobody and are refused.
 */
const PRINCIPAL = Type.String({ minLength: 1, pattern: '^\\S(.*\\S)?$' });

/**
 * Cozystack's `trustedCaller` set (packages/system/cozystack-basics, the
 * gateway and tenant host policies): cluster admins and the ServiceAccounts of
 * the platform's own namespaces, Flux's included.
 */
export const COZYSTACK_TRUSTED_GROUPS = [
  'system:masters',
  'system:serviceaccounts:cozy-system',
  'system:serviceaccounts:cozy-cert-manager',
  'system:serviceaccounts:cozy-fluxcd',
  'system:serviceaccounts:kube-system',
] as const;

/** The values of an allowlist; `what` says what the listed callers may do. */
export const trustedCallersSchema = (what: string) => Type.Object(
  {
    usernames: Type.Array(PRINCIPAL, { description: 'Usernames, compared exactly (request.userInfo.username).' }),
    groups: Type.Array(PRINCIPAL, {
      description: 'Groups: a request from a member of any of them is trusted (request.userInfo.groups).',
    }),
    serviceAccounts: Type.Array(
      Type.Object(
        {
          namespace: Type.String({ pattern: DNS_LABEL_PATTERN, maxLength: DNS_LABEL_MAX }),
          name: Type.String({ pattern: DNS_SUBDOMAIN_PATTERN, maxLength: DNS_SUBDOMAIN_MAX }),
        },
        { additionalProperties: false },
      ),
      { description: 'ServiceAccounts, each {namespace, name}: its username system:serviceaccount:<namespace>:<name>.' },
    ),
  },
  {
    additionalProperties: false,
    description:
      `${what} The default is Cozystack's trustedCaller set; a list given in values replaces the default list.`,
  },
);


/** The allowlist's values, as Helm references. */
export interface TrustedCallerOperands {
  readonly usernames: HelmOperand<readonly string[]>;
  readonly groups: HelmOperand<readonly string[]>;
  readonly serviceAccounts: HelmOperand<readonly { readonly namespace: string; readonly name: string }[]>;
}

/** The username a ServiceAccount authenticates as (`system:serviceaccount:<namespace>:<name>`), in CEL. */
const SERVICE_ACCOUNT_USERNAME = '"system:serviceaccount:" + sa.namespace + ":" + sa.name';

/**
 * The CEL variables of an allowlist: `trustedGroups`, `trustedUsernames` and
 * `trustedCaller`. Its lists come from values through `toJson`, which writes
 * CEL list literals (see Pipeline.toJson); ServiceAccounts become usernames,
 * so one `in` covers both.
 */
export function trustedCallerVariables(trusted: TrustedCallerOperands) {
  return [
    { name: 'trustedGroups', expression: Helm.str(Pipeline.toJson(trusted.groups)) },
    {
      name: 'trustedUsernames',
      // dyn(): the empty list (the default) has no element type, and a checker may refuse `sa.namespace` on it.
      expression: Helm.printf(
        `%s + dyn(%s).map(sa, ${SERVICE_ACCOUNT_USERNAME})`,
        Pipeline.toJson(trusted.usernames),
        Pipeline.toJson(trusted.serviceAccounts),
      ),
    },
    {
      name: 'trustedCaller',
      expression:
        'request.userInfo.username in variables.trustedUsernames || ' +
        '(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in variables.trustedGroups))',
    },
  ];
}

/** The allowlist in a refusal's words, in CEL: `<lead>users: …; groups: …` ("none" for an empty list). */
export function trustedCallersText(lead: string): string {
  const list = (name: string) => `(size(${name}) == 0 ? "none" : ${name}.join(", "))`;
  return `${JSON.stringify(`${lead}users: `)} + ${list('variables.trustedUsernames')} + "; groups: " + ${list('variables.trustedGroups')}`;
}
