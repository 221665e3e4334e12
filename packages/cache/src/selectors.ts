import {
  type FieldRequirement,
  type KubeObject,
  type LabelRequirement,
  type LabelSelectorInput,
  type LabelSelectorObject,
  parseLabelSelector,
  SelectorParseError,
} from '@kubeloop/client';
import { FieldNotIndexedError } from './cache-errors.js';
import { type IndexerReader, NAMESPACE_INDEX } from './store.js';

// How a cached list answers selectors (controller-runtime `cache_reader.go`): label selectors as parsed
// requirements, field selectors from indexes only.

/** The index name under which `indexField` stores a field (controller-runtime `field:<name>`). */
export function fieldIndexName(field: string): string {
  return `field:${field}`;
}

/**
 * The requirements of a label selector in any of its forms (string, `matchLabels` map, `LabelSelector`
 * object), parsed once per list. @throws SelectorParseError
 */
export function labelRequirements(sel: LabelSelectorInput | undefined): readonly LabelRequirement[] {
  if (sel === undefined) return [];
  if (typeof sel === 'string') return sel.trim() ? parseLabelSelector(sel) : [];
  const reqs: LabelRequirement[] = [];
  const o = sel as LabelSelectorObject;
  const isObject =
    (o.matchLabels !== undefined && typeof o.matchLabels === 'object') ||
    (o.matchExpressions !== undefined && Array.isArray(o.matchExpressions));
  const labels = isObject ? (o.matchLabels ?? {}) : (sel as Readonly<Record<string, string>>);
  for (const key of Object.keys(labels)) reqs.push({ key, operator: 'in', values: [labels[key]!] });
  if (isObject) {
    for (const e of o.matchExpressions ?? []) {
      const values = e.values ?? [];
      switch (e.operator) {
        case 'In':
        case 'NotIn':
          if (values.length === 0)
            throw new SelectorParseError(`${e.operator} for key ${e.key} needs values`);
          reqs.push({ key: e.key, operator: e.operator === 'In' ? 'in' : 'notin', values });
          break;
        case 'Exists':
          reqs.push({ key: e.key, operator: 'exists', values: [] });
          break;
        case 'DoesNotExist':
          reqs.push({ key: e.key, operator: '!', values: [] });
          break;
        default:
          throw new SelectorParseError(`unknown label selector operator ${JSON.stringify(e.operator)}`);
      }
    }
  }
  return reqs;
}

/**
 * Objects matching every requirement, from indexes (controller-runtime `requiresExactMatch` + `byIndexes`):
 * `metadata.namespace` narrows the namespace, `metadata.name` is a key lookup, any other field needs its
 * `field:<name>` index; the first indexed requirement selects, the others filter by their index keys.
 */
export function byFieldIndexes<T extends KubeObject>(
  store: IndexerReader<T>,
  reqs: readonly FieldRequirement[],
  namespace: string | undefined,
  kind: string,
): T[] {
  const names = new Set(store.indexerNames());
  let ns = namespace;
  const filters: Array<(o: T) => boolean> = [];
  let selected: T[] | undefined;
  for (const r of reqs) {
    const negated = r.operator === '!=';
    if (r.field === 'metadata.namespace') {
      if (negated) {
        filters.push((o) => (o.metadata?.namespace ?? '') !== r.value);
        continue;
      }
      if (ns !== undefined && ns !== '' && ns !== r.value) return [];
      ns = r.value;
      continue;
    }
    if (r.field === 'metadata.name') {
      filters.push(negated ? (o) => o.metadata?.name !== r.value : (o) => o.metadata?.name === r.value);
      continue;
    }
    const idx = fieldIndexName(r.field);
    if (!names.has(idx)) throw new FieldNotIndexedError(kind, r.field);
    if (!selected && !negated) {
      selected = store.byIndex(idx, r.value);
      continue;
    }
    // A second requirement, or `!=` (answered exactly by scanning, as the README says): filter by index keys.
    const keys = new Set(store.indexKeys(idx, r.value));
    filters.push(negated ? (o) => !keys.has(keyOf(o)) : (o) => keys.has(keyOf(o)));
  }
  let items = selected ?? (ns ? store.byIndex(NAMESPACE_INDEX, ns) : store.list());
  if (selected && ns) items = items.filter((o) => (o.metadata?.namespace ?? '') === ns);
  for (const f of filters) items = items.filter(f);
  return items;
}

function keyOf(o: KubeObject): string {
  const ns = o.metadata?.namespace;
  return ns ? `${ns}/${o.metadata?.name}` : (o.metadata?.name ?? '');
}
