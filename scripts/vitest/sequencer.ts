/**
 * File order of the whole run (root vitest.config.ts `sequence.sequencer`): project by project, the project with the
 * longest file first; in a project its slow files first, longest first, then its other files in vitest's own order.
 *
 * Why: vitest's BaseSequencer runs projects one after another in name order, and on a fresh clone (no
 * `node_modules/.vite` cache of earlier durations) orders a project's files by size. `create-kubeloop` sorts after
 * every `@kubeloop/*` project, so its 45 s template test started when the other workers were nearly done and
 * alone made the tail of a newcomer's `npm test`. Starting the long files first (longest-processing-time-first
 * over the 3 workers) lets the many short files fill the gaps instead.
 *
 * `slow-files.json` holds the files that took 3 s or more in a quiet fresh-clone run (seconds, path from the
 * repository root); a duration vitest cached from an earlier local run takes precedence.
 *
 * The files stay together by project: the projects whose longest file is longest come first, and inside a project
 * its slow files run longest first, then its short files in vitest's order. Why not one longest-first list across
 * projects: vitest's pool hands a finished worker of a non-isolated project its next file only when the next file
 * in the queue belongs to the same project; otherwise it stops the worker and starts a new one, which imports the
 * project's module graph again (seconds of CPU for the integration tests). Interleaved, nearly every slow file paid
 * that import (the soak's shuffled runs, where projects interleave throughout, spent 560 s importing against
 * 1,000 s running tests). Grouped, a new worker starts about once per project per worker slot (replayed over a soak
 * run's file durations: 39 new workers instead of 72). The two longest files still start first, and the projects
 * with a file over 10 s come before the projects of short files only, which fill the workers' gaps at the end.
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
    const byProject = new Map<string, TestSpecification[]>();
    for (const spec of base) {
      const group = byProject.get(spec.project.name) ?? [];
      group.push(spec);
      byProject.set(spec.project.name, group);
    }
    const groups = [...byProject.values()].map((specs) => {
      const slow = specs.filter((spec) => durationMs(spec) >= SLOW_MS);
      slow.sort((a, b) => durationMs(b) - durationMs(a));
      const longest = slow[0] ? durationMs(slow[0]) : 0;
      return { longest, specs: [...slow, ...specs.filter((spec) => durationMs(spec) < SLOW_MS)] };
    });
    // Array.prototype.sort is stable: projects with no slow file keep vitest's order after the others.
    groups.sort((a, b) => b.longest - a.longest);
    return groups.flatMap((group) => group.specs);
  }
}
