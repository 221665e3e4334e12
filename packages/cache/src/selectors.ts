import type { KubeObject, LabelSelectorInput } from '@kubeloop/client';
import {
  type FieldRequirement,
  formatLabelSelector,
  type LabelRequirement,
  parseLabelSelector,
} from '@kubeloop/client/apiutil';
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
 * object), parsed once per list through the client's one formatter and parser, so the cache refuses and
 * accepts exactly what the live client does (a key or value with selector syntax in it, Exists with values, a
 * number: SelectorParseError; null: everything). @throws SelectorParseError
 */
export function labelRequirements(sel: LabelSelectorInput | undefined): readonly LabelRequirement[] {
  const wire = formatLabelSelector(sel);
  return wire ? parseLabelSelector(wire) : [];
}

/**
 * Objects matching every requirement, from indexes (controller-runtime `requiresExactMatch` + `byIndexes`):
 * `metadata.namespace` narrows the namespace, `metadata.name` is a key lookup, any other field needs its
 * `field:<name>` index; the first indexed requirement selects, the others filter by their index keys.
 */
export function byFieldIndexes<T extends KubeObject>(
  store: IndexerReader<T, T>,
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
