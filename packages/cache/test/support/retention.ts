import { afterAll, beforeAll, describe } from 'vitest';

/** Every `objectRetention` an informer store has: a suite run through {@link eachRetention} runs once per value. */
export const RETENTIONS = ['objects', 'bytes'] as const;
export type Retention = (typeof RETENTIONS)[number];

let current: Retention = 'objects';

/** The retention of the suite running now (`'objects'` outside {@link eachRetention}). */
export function retention(): Retention {
  return current;
}

/**
 * Runs the suites `define` declares once per {@link RETENTIONS} value, under `objectRetention: <value>`, so the
 * informer and cache suites check both stores with the same tests (the tests read {@link retention}).
 */
export function eachRetention(define: () => void): void {
  describe.each(RETENTIONS)('objectRetention: %s', (r) => {
    beforeAll(() => {
      current = r;
    });
    afterAll(() => {
      current = 'objects';
    });
    define();
  });
}
