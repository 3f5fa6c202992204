import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Helm, Pipeline, Release, valuesOf } from '../../../constructs/helm/expr.js';
import { quoteIfNeeded, toYaml, toYamlStream } from '../../../constructs/helm/yaml.js';

/** What cdk8s hands the writer: placeholders already resolved to their markers. */
function resolved(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_key, v) => (v && typeof v === 'object' && typeof v.resolve === 'function' ? v.resolve() : v)),
  );
}

describe('quoteIfNeeded', () => {
  it.each(['apps/v1', 'app.kubernetes.io/name', 'system:serviceaccount:ns:sa', 'RollingUpdate', 'a plain sentence, with commas'])(
    'leaves %j plain',
    (s) => {
      expect(quoteIfNeeded(s)).toBe(s);
    },
  );

  it.each(['say "hi"', 'has(self.x) ? "a" : "b"', '', 'yes', 'No', 'on', 'null', '~', '10m', '0.1.0', '1e3', '-1', ' lead', 'trail ', 'a: b', 'a #b', '*ref', '{x}', 'line\nbreak', '.spec.x', '@x', 'x\u2028y'])(
    'quotes %j so that it reads back as the same string',
    (s) => {
      const text = quoteIfNeeded(s);
      expect(text).toMatch(/^["']/);
      expect(parse(`v: ${text}`, { version: '1.1' }).v).toBe(s);
      expect(parse(`v: ${text}`).v).toBe(s);
    },
  );
});

it('single-quotes text with double quotes when no escape is needed', () => {
  expect(quoteIfNeeded('x == "y"')).toBe(`'x == "y"'`);
  expect(quoteIfNeeded(`it's "x"`)).toBe(`"it's \\"x\\""`);
});

describe('toYaml', () => {
  it('round-trips ordinary documents', () => {
    const doc = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', labels: { 'a.b/c': 'true' } },
      data: { n: 3, f: 1.5, b: false, empty: {}, none: [], list: [{ a: 1, b: [1, 2] }, 'x', [3, [4]]] },
    };
    const text = toYaml(doc);
    expect(parse(text)).toEqual(doc);
    expect(parse(text, { version: '1.1' })).toEqual(doc);
  });

  it('writes sequences of maps with the first key on the dash line', () => {
    expect(toYaml({ items: [{ name: 'a', value: '1' }] })).toBe('items:\n  - name: a\n    value: "1"\n');
  });

  it('separates documents with ---', () => {
    expect(toYamlStream([{ a: 1 }, { b: 2 }])).toBe('a: 1\n---\nb: 2\n');
  });

  it('writes comments from the lookup, and a blank line between top-level keys', () => {
    const text = toYaml(
      { image: { tag: 'x' }, replicas: 1 },
      { spaceTopLevel: true, commentFor: (p) => (p.join('.') === 'image.tag' ? 'The tag.' : undefined) },
    );
    expect(text).toBe('image:\n  # The tag.\n  tag: x\n\nreplicas: 1\n');
  });
});

describe('Helm placeholders', () => {
  type Values = { controller: { replicas: number; resources: { limits?: Record<string, string> }; on: boolean }; image: { tag: string } };
  const v = valuesOf<Values>();

  it('renders typed scalars with quote / int and blocks with toYaml at the child column', () => {
    const doc = resolved({
      spec: {
        containers: [{ image: Helm.printf('x:%s', v('image.tag')), resources: Helm.yaml(v('controller.resources')) }],
        enabled: Helm.bool(v('controller.on')),
        namespace: Helm.str(Release.namespace),
        replicas: Helm.int(v('controller.replicas')),
      },
    });
    expect(toYaml(doc, { allowHelm: true })).toBe(
      [
        'spec:',
        '  containers:',
        '    - image: {{ printf "x:%s" .Values.image.tag | quote }}',
        '      resources:',
        '        {{- toYaml .Values.controller.resources | nindent 8 }}',
        '  enabled: {{ .Values.controller.on }}',
        '  namespace: {{ .Release.Namespace | quote }}',
        '  replicas: {{ .Values.controller.replicas | int }}',
        '',
      ].join('\n'),
    );
  });

  it('renders conditionals around map entries and list items, with else branches', () => {
    const doc = resolved({
      a: Helm.when(v('controller.on'), 'yes-value'),
      list: [Helm.when(v('controller.replicas'), { x: 1 }, { w: 2 }), 'z'],
    });
    expect(toYaml(doc, { allowHelm: true })).toBe(
      [
        '{{- if .Values.controller.on }}',
        'a: yes-value',
        '{{- end }}',
        'list:',
        '  {{- if .Values.controller.replicas }}',
        '  - x: 1',
        '  {{- else }}',
        '  - w: 2',
        '  {{- end }}',
        '  - z',
        '',
      ].join('\n'),
    );
  });

  it('combines pipelines with parentheses where Go templates need them', () => {
    const ns = Pipeline.orDefault(v('image.tag'), Release.namespace);
    expect(Helm.printf('--ns=%s', ns).pipeline).toBe('printf "--ns=%s" (default .Release.Namespace .Values.image.tag)');
    expect(Pipeline.and(v('controller.on'), Pipeline.ne(v('image.tag'), Release.name)).text).toBe(
      'and .Values.controller.on (ne .Values.image.tag .Release.Name)',
    );
    // toJson hands a value to CEL as a literal; printf nests inside another pipeline.
    expect(Helm.printf('x != %s', Pipeline.toJson(Pipeline.printf('a:%s', v('image.tag')))).pipeline).toBe(
      'printf "x != %s" (toJson (printf "a:%s" .Values.image.tag))',
    );
  });

  it('refuses placeholders in files Helm does not template', () => {
    expect(() => toYaml(resolved({ spec: { replicas: Helm.int(v('controller.replicas')) } }))).toThrow(
      /spec\.replicas: Helm placeholder \{\{ \.Values\.controller\.replicas \}\} in a file Helm does not template/,
    );
  });

  it('refuses a placeholder concatenated into a string', () => {
    const marker = Helm.str(Release.name).resolve();
    expect(() => toYaml({ name: `prefix-${marker}` }, { allowHelm: true })).toThrow(/name: .*concatenated.*Helm\.printf/);
  });

  it('refuses a printf whose verbs and operands disagree', () => {
    expect(() => Helm.printf('%s-%s', v('image.tag'))).toThrow(/takes 2 operands, got 1/);
  });

  it('indexes values keys that are not identifiers', () => {
    const w = valuesOf<{ 'frr-k8s': { enabled: boolean } }>();
    expect(w('frr-k8s.enabled').text).toBe('(index .Values "frr-k8s" "enabled")');
  });
});
