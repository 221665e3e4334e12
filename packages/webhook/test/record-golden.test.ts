/**
 * Records test/golden/1.32/ from a real kube-apiserver (not in CI: skipped unless RECORD_WEBHOOK_GOLDEN=1).
 * How and why: test/golden/1.32/README.md.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { newClient } from '@kubeloop/client';
import { loadRestConfig } from '@kubeloop/config';
import { describe, expect, it } from 'vitest';
import { runGoldenSteps, startRecorder, uninstallGolden } from './support/golden-scenario.js';

const RECORD = process.env.RECORD_WEBHOOK_GOLDEN === '1';
const OUT = join(import.meta.dirname, 'golden', '1.32');

describe.skipIf(!RECORD)('record the webhook goldens from a real kube-apiserver', () => {
  it('runs the steps against $KUBECONFIG and writes one file per step', async () => {
    const config = loadRestConfig();
    const recorder = await startRecorder();
    const namespace = `webhook-golden-${Date.now().toString(36)}`;
    try {
      const steps = await runGoldenSteps(config, recorder, namespace);
      await mkdir(OUT, { recursive: true });
      for (const s of steps)
        await writeFile(join(OUT, `${s.step}.json`), `${JSON.stringify({ namespace, ...s }, null, 1)}\n`);
      expect(steps.length).toBeGreaterThan(0);
    } finally {
      await uninstallGolden(newClient(config), namespace);
      await recorder.close();
    }
  }, 120_000);
});
