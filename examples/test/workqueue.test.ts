import { describe, expect, it } from 'vitest';
import { processAll } from '../src/workqueue.js';

describe('example: the work queue alone', () => {
  it('retries a failing key with backoff until it succeeds, drops one that never does, never runs a key twice at once', async () => {
    const attempts = new Map<string, number>();
    const active = new Set<string>();
    let overlap = false;
    const result = await processAll(
      ['ok', 'flaky', 'broken', 'ok'],
      async (key) => {
        if (active.has(key)) overlap = true;
        active.add(key);
        attempts.set(key, (attempts.get(key) ?? 0) + 1);
        await new Promise((resolve) => setImmediate(resolve));
        active.delete(key);
        if (key === 'flaky' && attempts.get(key)! < 3) throw new Error('transient');
        if (key === 'broken') throw new Error('permanent');
      },
      { workers: 3, maxRetries: 2 },
    );
    expect(result.done.sort()).toEqual(['flaky', 'ok']);
    expect(result.dropped).toEqual(['broken']);
    expect(attempts.get('ok')).toBe(1); // the duplicate add collapsed
    expect(attempts.get('flaky')).toBe(3);
    expect(attempts.get('broken')).toBe(3); // first try + 2 retries
    expect(overlap).toBe(false);
  });
});
