/**
 * A small deterministic YAML writer for Kubernetes manifests and Helm templates.
 *
 * cdk8s's own writer cannot place Helm expressions, which are not YAML. This one
 * walks the resolved JSON tree, writes plain YAML for ordinary values and renders
 * `HelmExpr` markers (see expr.ts) as template actions at the right indentation.
 * Output depends only on the input tree: two-space indentation, sequences
 * indented under their key, strings quoted whenever a YAML 1.1 or 1.2 reader
 * could take them for anything but a string.
 */
import { decodeConditional, decodeHelmExpr, type EncodedConditional } from './expr.js';

export interface YamlOptions {
  /**
   * Whether Helm placeholders may appear. Files Helm does not template
   * (`crds/`, `values.yaml`) must not contain any.
   * @default false
   */
  readonly allowHelm?: boolean;
  /**
   * Comment lines to write above a map key, looked up by its path from the root.
   * @default no comments
   */
  readonly commentFor?: (path: readonly string[]) => string | undefined;
  /**
   * Blank line between top-level keys (used for values.yaml).
   * @default false
   */
  readonly spaceTopLevel?: boolean;
}

const INDENT = 2;

/** Writes several documents as one multi-document YAML stream. */
export function toYamlStream(documents: readonly unknown[], options: YamlOptions = {}): string {
  return documents.map((doc) => toYaml(doc, options)).join('---\n');
}

/** Writes one document; the result ends with a newline. */
export function toYaml(document: unknown, options: YamlOptions = {}): string {
  const writer = new Writer(options);
  if (isMap(document) && Object.keys(document).length > 0) {
    return writer.mapEntries(document, 0, []).join('\n') + '\n';
  }
  if (Array.isArray(document) && document.length > 0) {
    return writer.sequenceItems(document, 0, []).join('\n') + '\n';
  }
  return writer.scalarOrEmpty(document, []) + '\n';
}

class Writer {
  constructor(private readonly options: YamlOptions) {}

  mapEntries(map: Record<string, unknown>, indent: number, path: readonly string[]): string[] {
    const lines: string[] = [];
    const pad = ' '.repeat(indent);
    Object.entries(map).forEach(([key, value], index) => {
      if (value === undefined) {
        return;
      }
      const here = [...path, key];
      if (indent === 0 && this.options.spaceTopLevel && index > 0) {
        lines.push('');
      }
      const comment = this.options.commentFor?.(here);
      if (comment) {
        lines.push(...comment.split('\n').map((line) => `${pad}# ${line}`.trimEnd()));
      }
      const conditional = decodeConditional(value);
      if (conditional) {
        lines.push(...this.conditional(conditional, indent, here, (branch) => this.mapEntries({ [key]: branch }, indent, path)));
        return;
      }
      const keyText = this.key(key, here);
      const helm = typeof value === 'string' ? this.helm(value, here) : undefined;
      if (helm?.mode === 'block') {
        // `{{-` eats the newline after the key; nindent puts the subtree at the child column.
        lines.push(`${pad}${keyText}:`, `${pad}${' '.repeat(INDENT)}{{- toYaml ${helm.pipeline} | nindent ${indent + INDENT} }}`);
      } else if (isMap(value) && Object.keys(value).length > 0) {
        lines.push(`${pad}${keyText}:`, ...this.mapEntries(value, indent + INDENT, here));
      } else if (Array.isArray(value) && value.length > 0) {
        lines.push(`${pad}${keyText}:`, ...this.sequenceItems(value, indent + INDENT, here));
      } else {
        lines.push(`${pad}${keyText}: ${this.scalarOrEmpty(value, here)}`);
      }
    });
    return lines;
  }

  sequenceItems(items: readonly unknown[], indent: number, path: readonly string[]): string[] {
    const lines: string[] = [];
    const pad = ' '.repeat(indent);
    items.forEach((item, index) => {
      const here = [...path, String(index)];
      const conditional = decodeConditional(item);
      if (conditional) {
        lines.push(...this.conditional(conditional, indent, here, (branch) => this.sequenceItems([branch], indent, path)));
        return;
      }
      let nested: string[] | undefined;
      if (isMap(item) && Object.keys(item).length > 0) {
        // Comments inside list items would land between the dash and the first key.
        nested = new Writer({ ...this.options, commentFor: undefined }).mapEntries(item, indent + INDENT, here);
      } else if (Array.isArray(item) && item.length > 0) {
        nested = this.sequenceItems(item, indent + INDENT, here);
      }
      if (nested) {
        const [first = '', ...rest] = nested;
        lines.push(`${pad}- ${first.slice(indent + INDENT)}`, ...rest);
        return;
      }
      if (typeof item === 'string' && this.helm(item, here)?.mode === 'block') {
        throw new Error(`${describe(here)}: a toYaml placeholder cannot be a single list item`);
      }
      lines.push(`${pad}- ${this.scalarOrEmpty(item, here)}`);
    });
    return lines;
  }

  /** `{{- if }}` / `{{- else }}` / `{{- end }}` around the lines of each branch. */
  private conditional(
    conditional: EncodedConditional,
    indent: number,
    path: readonly string[],
    branchLines: (branch: unknown) => string[],
  ): string[] {
    if (!this.options.allowHelm) {
      throw new Error(`${describe(path)}: Helm conditional in a file Helm does not template`);
    }
    const pad = ' '.repeat(indent);
    const lines = [`${pad}{{- if ${conditional.condition} }}`, ...branchLines(conditional.then)];
    if (conditional.otherwise !== undefined) {
      lines.push(`${pad}{{- else }}`, ...branchLines(conditional.otherwise));
    }
    lines.push(`${pad}{{- end }}`);
    return lines;
  }

  scalarOrEmpty(value: unknown, path: readonly string[]): string {
    if (value === null || value === undefined) {
      return 'null';
    }
    if (Array.isArray(value)) {
      return '[]';
    }
    if (isMap(value)) {
      return '{}';
    }
    switch (typeof value) {
      case 'boolean':
        return value ? 'true' : 'false';
      case 'number':
        if (!Number.isFinite(value)) {
          throw new Error(`${describe(path)}: ${value} has no YAML spelling`);
        }
        return String(value);
      case 'string': {
        const helm = this.helm(value, path);
        if (helm) {
          return helm.mode === 'string'
            ? `{{ ${helm.pipeline} | quote }}`
            : helm.mode === 'int'
              ? `{{ ${helm.pipeline} | int }}`
              : `{{ ${helm.pipeline} }}`;
        }
        return quoteIfNeeded(value);
      }
      default:
        throw new Error(`${describe(path)}: cannot write a ${typeof value} as YAML`);
    }
  }

  private key(key: string, path: readonly string[]): string {
    if (decodeHelmExpr(key)) {
      throw new Error(`${describe(path)}: a Helm placeholder cannot be a map key`);
    }
    return quoteIfNeeded(key);
  }

  private helm(value: string, path: readonly string[]) {
    let decoded;
    try {
      decoded = decodeHelmExpr(value);
    } catch (error) {
      throw new Error(`${describe(path)}: ${(error as Error).message}`);
    }
    if (decoded && !this.options.allowHelm) {
      throw new Error(`${describe(path)}: Helm placeholder {{ ${decoded.pipeline} }} in a file Helm does not template`);
    }
    return decoded;
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(path: readonly string[]): string {
  return path.length === 0 ? '(document)' : path.join('.');
}

/** Words that YAML 1.1 (which Helm and kubectl still read) takes for booleans or null. */
const RESERVED = /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~)$/;
/**
 * Conservative plain-scalar alphabet: starts with a letter, `_` or `/`; `:` and
 * single spaces only between runs of safe characters, so `: ` and ` #` never occur.
 */
const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./@=+,;()'-]*(?:[: ][A-Za-z0-9_./@=+,;()'-]+)*$/;

/** Printable ASCII without `'`: safe inside a single-quoted scalar, which has no escapes. */
const SINGLE_QUOTABLE = /^[\x20-\x26\x28-\x7e]*$/;

/**
 * Plain when unambiguous; single-quoted when that needs no escaping (CEL and
 * other text with double quotes stay readable); otherwise double-quoted with
 * JSON escapes, which are valid YAML.
 */
export function quoteIfNeeded(value: string): string {
  if (PLAIN.test(value) && !RESERVED.test(value)) {
    return value;
  }
  if (value.includes('"') && SINGLE_QUOTABLE.test(value)) {
    return `'${value}'`;
  }
  // JSON leaves U+0080-U+009F, U+2028/9 and U+FEFF raw; YAML 1.1 readers treat some as breaks.
  return JSON.stringify(value).replace(
    /[\u0080-\u009f\u2028\u2029\ufeff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
