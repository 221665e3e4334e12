import { checkRules } from './cel.js';
import { SchemaError } from './errors.js';
import type { CustomResourceKind } from './kind.js';
import type { CustomResourceDefinition, CustomResourceDefinitionVersion } from './types.js';

/**
 * The apiextensions.k8s.io/v1 `CustomResourceDefinition` of one kind, from one or more versions defined with
 * {@link defineKind} (same group, kind and names; exactly one `storage: true`). Versions are listed in the order
 * given. Compiles every CEL rule (see {@link CelCompileError}) and checks what kube-apiserver checks across
 * versions, so a CRD that this returns is one the server accepts.
 *
 * Throws {@link SchemaError} (or {@link CelCompileError}) naming the version and property path.
 */
export function customResourceDefinition(...kinds: readonly CustomResourceKind[]): CustomResourceDefinition {
  const first = kinds[0];
  if (!first) throw new SchemaError('', 'customResourceDefinition needs at least one kind');
  const seen = new Set<string>();
  for (const k of kinds) {
    for (const field of ['group', 'kind', 'plural', 'singular', 'listKind', 'scope'] as const) {
      if (k[field] !== first[field])
        throw new SchemaError(
          '',
          `version ${k.version}: ${field} ${JSON.stringify(k[field])} differs from ${JSON.stringify(first[field])} of version ${first.version}: the versions of one CRD share their names`,
        );
    }
    if (seen.has(k.version)) throw new SchemaError('', `version ${k.version} is given twice`);
    seen.add(k.version);
  }
  const storage = kinds.filter((k) => k.storage);
  if (storage.length !== 1)
    throw new SchemaError(
      '',
      `spec.versions: Invalid value: must have exactly one version marked as storage version (have ${storage.map((k) => k.version).join(', ') || 'none'})`,
    );
  const versions = kinds.map((k): CustomResourceDefinitionVersion => {
    try {
      checkRules(k.schema, '');
    } catch (err) {
      if (err instanceof SchemaError && kinds.length > 1)
        err.message = `version ${k.version}: ${err.message}`;
      throw err;
    }
    const v: CustomResourceDefinitionVersion = {
      name: k.version,
      served: k.served,
      storage: k.storage,
      schema: {
        openAPIV3Schema: structuredClone(
          k.schema,
        ) as CustomResourceDefinitionVersion['schema']['openAPIV3Schema'],
      },
    };
    if (k.deprecated) v.deprecated = true;
    if (k.deprecationWarning !== undefined) v.deprecationWarning = k.deprecationWarning;
    if (k.subresources.status || k.subresources.scale) {
      v.subresources = {};
      if (k.subresources.status) v.subresources.status = {};
      if (k.subresources.scale) v.subresources.scale = { ...k.subresources.scale };
    }
    if (k.printerColumns.length > 0) v.additionalPrinterColumns = k.printerColumns.map((c) => ({ ...c }));
    if (k.selectableFields.length > 0)
      v.selectableFields = k.selectableFields.map((jsonPath) => ({ jsonPath }));
    return v;
  });
  const names: CustomResourceDefinition['spec']['names'] = {
    kind: first.kind,
    listKind: first.listKind,
    plural: first.plural,
    singular: first.singular,
  };
  const shortNames = [...new Set(kinds.flatMap((k) => k.shortNames))];
  const categories = [...new Set(kinds.flatMap((k) => k.categories))];
  if (shortNames.length > 0) names.shortNames = shortNames;
  if (categories.length > 0) names.categories = categories;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${first.plural}.${first.group}` },
    spec: { group: first.group, names, scope: first.scope, versions },
  };
}

/**
 * apimachinery's `version.CompareKubeAwareVersionStrings` as an ascending sort key: GA before beta before alpha,
 * higher numbers first within each (`v2`, `v1`, `v1beta2`, `v1beta1`, `v1alpha1`), then other names alphabetically.
 */
function versionRank(v: string): [number, number, number, string] {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return [3, 0, 0, v];
  const level = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
  return [level, -Number(m[1]), -Number(m[3] ?? 0), v];
}

function compareVersions(a: string, b: string): number {
  const x = versionRank(a);
  const y = versionRank(b);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x[3].localeCompare(y[3]);
}

/**
 * Groups kinds by `plural.group` and returns one CRD per group/kind (versions in kube's priority order, as
 * `kubectl` lists them), sorted by name:
 * what `kubeloop crd generate` writes for a module's exports.
 */
export function customResourceDefinitions(kinds: Iterable<CustomResourceKind>): CustomResourceDefinition[] {
  const byName = new Map<string, CustomResourceKind[]>();
  for (const k of kinds) {
    const name = `${k.plural}.${k.group}`;
    const list = byName.get(name) ?? [];
    if (!list.includes(k)) list.push(k);
    byName.set(name, list);
  }
  return [...byName.keys()]
    .sort()
    .map((name) =>
      customResourceDefinition(
        ...(byName.get(name) ?? []).sort((a, b) => compareVersions(a.version, b.version)),
      ),
    );
}
