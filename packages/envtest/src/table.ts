import type { KObject, ResourceType } from './resource-type.js';

/** Description of the Name column, as the server's printers give it. */
export const nameColumnDescription =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** Human age as kubectl prints it (`5s`, `3m`, `2m5s`, `3h10m`, `2d`), for a RFC 3339 timestamp. */
export function ageString(ts: unknown, now: number): string {
  if (typeof ts !== 'string') return '<unknown>';
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return '<unknown>';
  let s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  let m = Math.floor(s / 60);
  s = s % 60;
  if (m < 10) return s ? `${m}m${s}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  let h = Math.floor(m / 60);
  m = m % 60;
  if (h < 8) return m ? `${h}h${m}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  h = h % 24;
  if (d < 8) return h ? `${d}d${h}h` : `${d}d`;
  if (d < 730) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

/** Which object a Table row embeds (`?includeObject=`). */
export type IncludeObject = 'Metadata' | 'Object' | 'None';

/** Column definitions (without the cell functions) of a resource's Table. */
export function columnDefinitions(rt: ResourceType): Record<string, unknown>[] {
  const cols = [
    { name: 'Name', type: 'string', format: 'name', description: nameColumnDescription, priority: 0 },
    ...(rt.tableColumns ?? []).map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format,
      description: c.description,
      priority: c.priority,
    })),
  ];
  return cols;
}

/** One Table row for an object. */
export function tableRow(
  rt: ResourceType,
  o: KObject,
  include: IncludeObject,
  now: number,
): Record<string, unknown> {
  const meta = (o.metadata ?? {}) as Record<string, unknown>;
  const cells: unknown[] = [meta.name ?? ''];
  for (const c of rt.tableColumns ?? []) cells.push(c.cell(o, now) ?? null);
  const row: Record<string, unknown> = { cells };
  if (include === 'Metadata') {
    row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: meta };
  } else if (include === 'Object') {
    row.object = o;
  }
  return row;
}

/** A complete meta.k8s.io/v1 Table. */
export function buildTable(
  rt: ResourceType,
  objects: readonly KObject[],
  listMeta: Record<string, unknown>,
  include: IncludeObject,
  withHeaders = true,
): Record<string, unknown> {
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    ...(withHeaders ? { columnDefinitions: columnDefinitions(rt) } : { columnDefinitions: null }),
    rows: objects.map((o) => tableRow(rt, o, include, now)),
  };
}
