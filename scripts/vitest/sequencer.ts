/**
 * File order of the whole run (root vitest.config.ts `sequence.sequencer`): the slow files first, longest first,
 * then every other file in vitest's own order.
 *
 * Why: vitest's BaseSequencer runs projects one after another in name order, and on a fresh clone (no
 * `node_modules/.vite` cache of earlier durations) orders a project's files by size. `create-kubeloop` sorts after
 * every `@kubeloop/*` project, so its 45 s template test started when the other workers were nearly done and
 * alone made the tail of a newcomer's `npm test`. Starting the long files first (longest-processing-time-first
 * over the 3 workers) lets the many short files fill the gaps instead.
 *
 * `slow-files.json` holds the files that took 3 s or more in a quiet fresh-clone run (seconds, path from the
 * repository root); a duration vitest cached from an earlier local run takes precedence. The short files keep
 * vitest's order, which keeps a project's files together so a non-isolated project reuses its worker.
 * `--sequence.shuffle` (the soak) shuffles every file with the run's seed instead, as vitest's RandomSequencer does.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SLOW_MS = 3_000;
const measured: Record<string, number> = JSON.parse(
  readFileSync(new URL('./slow-files.json', import.meta.url), 'utf8'),
);

/** A seeded Fisher-Yates shuffle (mulberry32), so a soak seed replays the same file order. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { root, sequence } = this.ctx.config;
    if (sequence.shuffle) return shuffled(files, sequence.seed ?? Date.now());
    const base = await super.sort(files);
    const durationMs = (spec: TestSpecification): number => {
      const path = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`)?.duration;
      return cached ?? (measured[path] ?? 0) * 1000;
    };
    const slow = base.filter((spec) => durationMs(spec) >= SLOW_MS);
    slow.sort((a, b) => durationMs(b) - durationMs(a));
    return [...slow, ...base.filter((spec) => durationMs(spec) < SLOW_MS)];
  }
}
