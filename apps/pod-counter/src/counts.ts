import type { DeepReadonly, ObjectOf, Pod } from '@kubeloop/client';

/** The pod object type (client-node's `V1Pod`), as the `Pod` kind descriptor carries it. */
export type PodObject = ObjectOf<typeof Pod>;

/** Pods by namespace, then by phase (`Pending`, `Running`, …; `Unknown` when the pod has no phase yet). */
export type PodCounts = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** Counts `pods` per namespace and phase. Keys come out sorted, so equal counts serialise equally. */
export function countPods(pods: Iterable<DeepReadonly<PodObject>>): PodCounts {
  const counts = new Map<string, Map<string, number>>();
  for (const pod of pods) {
    const ns = pod.metadata?.namespace ?? '';
    const phase = pod.status?.phase || 'Unknown';
    let byPhase = counts.get(ns);
    if (!byPhase) {
      byPhase = new Map();
      counts.set(ns, byPhase);
    }
    byPhase.set(phase, (byPhase.get(phase) ?? 0) + 1);
  }
  const out: Record<string, Record<string, number>> = {};
  for (const ns of [...counts.keys()].sort()) {
    const byPhase = counts.get(ns) as Map<string, number>;
    const phases: Record<string, number> = {};
    for (const phase of [...byPhase.keys()].sort()) phases[phase] = byPhase.get(phase) as number;
    out[ns] = phases;
  }
  return out;
}

/** The number of pods in `counts`. */
export function totalOf(counts: PodCounts): number {
  let total = 0;
  for (const byPhase of Object.values(counts)) for (const n of Object.values(byPhase)) total += n;
  return total;
}
