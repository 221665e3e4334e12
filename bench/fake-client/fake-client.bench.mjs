// fake-client (in-process, no sockets): what one test pays to get a client with envtest's semantics —
// `newFakeClient()` alone (an in-process ApiServer + the real ApiClient over InProcessTransport), then with the
// first request (the RESTMapper's discovery rides on it), then seeded with 10 ConfigMaps; beside it the same
// first request against envtest over HTTPS (`startApiServer`: CA and serving key, listener, kubeconfig file,
// TLS handshake) with the live client. Target: ≤ 20 ms per fake with its first request (issue budget).
// `nsPerOp` is the time per fake, made and closed. Knobs: FAKE_OBJECTS (10).
import { knob, metricsOf, ratio } from '../lib/common.mjs';

const OBJECTS = knob('FAKE_OBJECTS', 10, 2);
const STARTUP = 'new client, closed';
const FIRST = 'new client + first get (discovery included), closed';
const SEEDED = `new client seeded with ${OBJECTS} ConfigMaps + first list, closed`;

const seeds = Array.from({ length: OBJECTS }, (_, i) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'default', name: `cm-${i}` },
  data: { k: String(i) },
}));

async function libs() {
  const [testing, client, envtest, config] = await Promise.all([
    import('@kubeloop/testing'),
    import('@kubeloop/client'),
    import('@kubeloop/envtest'),
    import('@kubeloop/config'),
  ]);
  return { ...testing, ...client, ...envtest, ...config };
}

export async function tasks() {
  const l = await libs();
  const key = { namespace: 'default', name: 'absent' };
  const get = (c) => c.get(l.ConfigMap, key).catch((e) => (l.isNotFound(e) ? undefined : Promise.reject(e)));
  return [
    {
      scenario: STARTUP,
      impl: 'kubeloop-fake',
      fn: async () => (await l.newFakeClient()).close(),
    },
    {
      scenario: FIRST,
      impl: 'kubeloop-fake',
      fn: async () => {
        const c = await l.newFakeClient();
        await get(c);
        await c.close();
      },
    },
    {
      scenario: FIRST,
      impl: 'envtest-https',
      fn: async () => {
        const server = await l.startApiServer();
        const c = l.newClient(l.loadRestConfig({ kubeconfig: server.kubeconfigPath, env: {}, argv: [] }));
        await get(c);
        await c.close();
        await server.stop();
      },
    },
    {
      scenario: SEEDED,
      impl: 'kubeloop-fake',
      fn: async () => {
        const c = await l.newFakeClient({ objects: seeds });
        const list = await c.list(l.ConfigMap, { namespace: 'default' });
        if (list.items.length !== OBJECTS) throw new Error(`listed ${list.items.length}, want ${OBJECTS}`);
        await c.close();
      },
    },
  ];
}

export function summary(results) {
  const first = (i) => metricsOf(results, FIRST, i);
  const ms = (s, i) => {
    const m = metricsOf(results, s, i);
    return m ? Math.round(m.nsPerOp / 1e4) / 100 : null;
  };
  return [
    {
      scenario: FIRST,
      impl: 'kubeloop-fake vs envtest-https',
      ratio: ratio(first('kubeloop-fake')?.nsPerOp, first('envtest-https')?.nsPerOp),
      ratioOf: 'time per new client with its first request ÷ envtest over HTTPS',
      msPerFake: {
        startup: ms(STARTUP, 'kubeloop-fake'),
        withFirstRequest: ms(FIRST, 'kubeloop-fake'),
        seeded: ms(SEEDED, 'kubeloop-fake'),
        envtestHttps: ms(FIRST, 'envtest-https'),
      },
      target: 'withFirstRequest ≤ 20 ms',
    },
  ];
}
