/** Rendering one object for the negotiated output (JSON, Table, PartialObjectMetadata) and the Scale view. */
import type { OutputFormat } from '../http.js';
import { getPath, type KObject, type ResourceType } from '../resource-type.js';
import { buildTable, type IncludeObject } from '../table.js';
import { isObj } from './context.js';

/** Render one object for the negotiated output. */
export function renderOne(
  rt: ResourceType,
  o: Readonly<KObject>,
  fmt: OutputFormat,
  q: URLSearchParams,
): unknown {
  if (fmt.kind === 'table') {
    const include = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
    const rv = (o.metadata as Record<string, unknown> | undefined)?.resourceVersion;
    return buildTable(rt, [o as KObject], rv !== undefined ? { resourceVersion: rv } : {}, include);
  }
  if (fmt.kind === 'partial')
    return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
  return o;
}

/** Scale subresource view of an object. */
export function toScale(rt: ResourceType, o: Readonly<KObject>): Record<string, unknown> {
  const m = o.metadata as Record<string, unknown>;
  const scale = rt.scale!;
  let selector = '';
  if (scale.labelSelectorPath) {
    const sel = getPath(o, scale.labelSelectorPath);
    if (typeof sel === 'string') selector = sel;
    else if (isObj(sel)) {
      const ml = isObj(sel.matchLabels) ? sel.matchLabels : {};
      selector = Object.entries(ml)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(',');
    }
  }
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: Number(getPath(o, scale.specReplicasPath) ?? 0) },
    status: {
      replicas: Number(getPath(o, scale.statusReplicasPath) ?? 0),
      ...(selector ? { selector } : {}),
    },
  };
}
