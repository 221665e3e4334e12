import { ConfigMap, type Writer } from '@kubeloop/client';
import { type PodCounts, totalOf } from './counts.js';

/** The field manager pod-counter applies its report with. */
export const REPORT_FIELD_MANAGER = 'pod-counter';

/** Where the report goes: `<namespace>/<name>` of a ConfigMap. */
export interface ReportTarget {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Parses `--report-configmap <namespace>/<name>`.
 * @throws TypeError naming the expected shape when `spec` is not two DNS names joined by `/`.
 */
export function parseReportTarget(spec: string): ReportTarget {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(spec);
  if (!m) throw new TypeError(`--report-configmap must be <namespace>/<name>, got "${spec}"`);
  return { namespace: m[1] as string, name: m[3] as string };
}

/**
 * Writes the counts to a ConfigMap with server-side apply under its own field manager
 * ({@link REPORT_FIELD_MANAGER}): the first write creates it, later ones update only its `data`. A write
 * happens only when the counts differ from the last ones written, so a cluster where nothing changes sees
 * no writes at all. `data` holds `total` (a number as text) and `counts.json` (`{namespace: {phase: n}}`,
 * keys sorted).
 */
export class ConfigMapReport {
  #last: string | undefined;

  constructor(
    private readonly client: Pick<Writer, 'apply'>,
    readonly target: ReportTarget,
  ) {}

  /**
   * Applies `counts` unless they equal the last ones written. Resolves `true` when it wrote.
   * @throws StatusError when the write fails (the next call tries again).
   */
  async write(counts: PodCounts, signal?: AbortSignal): Promise<boolean> {
    const text = JSON.stringify(counts);
    if (text === this.#last) return false;
    await this.client.apply(
      ConfigMap,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: this.target.namespace, name: this.target.name },
        data: { total: String(totalOf(counts)), 'counts.json': text },
      },
      { fieldManager: REPORT_FIELD_MANAGER, force: true, ...(signal ? { signal } : {}) },
    );
    this.#last = text;
    return true;
  }
}
