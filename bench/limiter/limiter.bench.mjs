// limiter (replay server): a kubeloop client configured with QPS 50 / burst 100 sends small list requests from
// 16 concurrent callers for 10 s; the achieved rate is judged from the SERVER's request log (arrival times),
// not from the client's own view. Expected in a window of D seconds from the first request: burst + QPS × D
// requests (client-go's token bucket starts full). Knobs: LIMITER_QPS (50), LIMITER_BURST (100),
// LIMITER_SECONDS (10).
import { knob, replayEnv, replayLog, replaySetup, round, SMOKE } from '../lib/common.mjs';

const QPS = knob('LIMITER_QPS', 50);
const BURST = knob('LIMITER_BURST', 100, 10);
const SECONDS = SMOKE ? 0.3 : knob('LIMITER_SECONDS', 10);
const SCENARIO = `limiter QPS ${QPS} burst ${BURST} over ${SECONDS} s`;
const CALLERS = 16;

export const setup = () => replaySetup({ objects: 10, shape: 'small' });

export function tasks() {
  return [
    {
      scenario: SCENARIO,
      impl: 'kubeloop-client',
      measure: async () => {
        const { kubeconfig, url } = replayEnv();
        const { loadRestConfig } = await import('@kubeloop/config');
        const { newClient, Pod } = await import('@kubeloop/client');
        const client = newClient({
          ...loadRestConfig({ kubeconfig, env: {}, argv: [] }),
          qps: QPS,
          burst: BURST,
        });
        await client.list(Pod, { limit: 1 }); // discovery and the TLS connection, before the clock
        await new Promise((r) => setTimeout(r, Math.ceil((BURST / QPS) * 1000) + 100)); // bucket full again
        await replayLog(url, true);
        const start = performance.now();
        const deadline = start + SECONDS * 1000;
        let sent = 0;
        await Promise.all(
          Array.from({ length: CALLERS }, async () => {
            while (performance.now() < deadline) {
              await client.list(Pod, { limit: 1 });
              sent++;
            }
          }),
        );
        await client.close();
        const log = (await replayLog(url)).filter((e) => e.path.startsWith('/api/v1/pods?'));
        const t0 = log[0]?.t ?? 0;
        const windowMs = SECONDS * 1000;
        const inWindow = log.filter((e) => e.t - t0 < windowMs).length;
        const expected = BURST + QPS * SECONDS;
        // steady state: after the burst, requests per second from the server's clock
        const after = log.slice(BURST);
        const steady = after.length > 1 ? ((after.length - 1) / (after.at(-1).t - after[0].t)) * 1000 : null;
        return {
          opsPerSec: Math.max(1, Math.round((inWindow / windowMs) * 1000)),
          qps: QPS,
          burst: BURST,
          seconds: SECONDS,
          requestsInWindow: inWindow,
          expectedInWindow: expected,
          achievedVsExpected: round(inWindow / expected, 4),
          steadyRatePerSec: round(steady, 2),
          steadyVsQps: round(steady / QPS, 4),
          clientSideRequests: sent,
          smoke: SMOKE,
        };
      },
    },
  ];
}

export function summary(results) {
  const r = results.find((x) => x.scenario === SCENARIO);
  const m = r?.medians ?? r;
  return [
    {
      scenario: SCENARIO,
      impl: 'kubeloop-client vs configured',
      ratio: m?.achievedVsExpected ?? null,
      ratioOf: 'requests the server saw in the window ÷ (burst + QPS × seconds) (target 0.97–1.03)',
      ratios: { steadyVsQps: m?.steadyVsQps ?? null },
    },
  ];
}
