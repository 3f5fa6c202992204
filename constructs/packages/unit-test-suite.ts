/**
 * The shape of a helm-unittest suite (tests/*_test.yaml), as Cozystack's suites
 * use it: templates under test, a release, optional values and capabilities, and
 * tests of asserts. Only the parts these packages use are typed.
 */

/** One helm-unittest assertion, e.g. `{ equal: { path, value } }`. */
export type UnitTestAssert =
  | { readonly equal: { readonly path: string; readonly value: unknown } }
  | { readonly contains: { readonly path: string; readonly content: unknown; readonly any?: boolean } }
  | { readonly matchRegex: { readonly path: string; readonly pattern: string } }
  | { readonly hasDocuments: { readonly count: number } }
  | { readonly isKind: { readonly of: string } }
  | { readonly exists: { readonly path: string } }
  | { readonly notExists: { readonly path: string } }
  | { readonly failedTemplate: { readonly errorPattern: string } }
  /** On a raw template such as NOTES.txt. */
  | { readonly matchRegexRaw: { readonly pattern: string } }
  | { readonly notMatchRegexRaw: { readonly pattern: string } }
  | { readonly containsDocument: { readonly kind: string; readonly apiVersion: string; readonly name: string; readonly any?: boolean } }
  | ({ readonly not: true } & (
      | { readonly containsDocument: { readonly kind: string; readonly apiVersion: string; readonly name: string; readonly any?: boolean } }
      | { readonly contains: { readonly path: string; readonly content: unknown; readonly any?: boolean } }
    ));

export interface UnitTest {
  readonly it: string;
  /** The template asserted on, relative to the chart; defaults to every template of the suite. */
  readonly template?: string;
  readonly documentSelector?: { readonly path: string; readonly value: unknown };
  /** Dotted keys or nested maps, as `helm --set`. */
  readonly set?: Readonly<Record<string, unknown>>;
  readonly capabilities?: { readonly apiVersions: readonly string[] };
  readonly asserts: readonly UnitTestAssert[];
}

export interface UnitTestSuite {
  readonly suite: string;
  readonly templates: readonly string[];
  readonly release: { readonly name: string; readonly namespace: string };
  /** Values files, relative to the tests/ folder. */
  readonly values?: readonly string[];
  readonly set?: Readonly<Record<string, unknown>>;
  /** Suite-wide; per-test capabilities merge with these, so the absent-API case needs a suite of its own. */
  readonly capabilities?: { readonly apiVersions: readonly string[] };
  readonly tests: readonly UnitTest[];
}
