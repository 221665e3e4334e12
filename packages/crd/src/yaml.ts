import { stringify } from 'yaml';

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .filter((k) => o[k] !== undefined)
        .map((k) => [k, sortKeys(o[k])]),
    );
  }
  return v;
}

/**
 * Serialises manifests as one YAML stream with a stable form, as controller-gen writes its output: keys sorted
 * alphabetically at every level (list order kept), no line folding, two-space indents, documents separated by
 * `---`, and `header` (each line prefixed with `# `) first. The same objects always give the same bytes.
 */
export function toYaml(objects: readonly unknown[], header?: string): string {
  const head = header
    ? `${header
        .split('\n')
        .map((l) => (l ? `# ${l}` : '#'))
        .join('\n')}\n`
    : '';
  const docs = objects.map(
    (o) => `---\n${stringify(sortKeys(o), { lineWidth: 0, indent: 2, aliasDuplicateObjects: false })}`,
  );
  return head + docs.join('');
}
