/**
 * The webhook exchanges recorded from a real kube-apiserver into test/golden/1.32/ and replayed against envtest:
 * a recording HTTPS webhook server (admission and conversion, answering by the object's name) and the writes
 * and reads that make the API server call it. `record-golden.test.ts` runs it against a real cluster and writes
 * the files; `golden.test.ts` runs it against envtest and compares the shapes.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type ApiClient, type KubeObject, kind, Namespace, newClient, StatusError } from '@kubeloop/client';
import type { RestConfig } from '@kubeloop/config';
import { type PemPair, splitPem } from '../../src/certs/pki.js';
import { loopbackPki } from './tls.js';

export const GROUP = 'golden.kubeloop.io';
const CRD_NAME = `gadgets.${GROUP}`;
const Gadget = kind(`${GROUP}/v1`, 'Gadget');
const GadgetAlpha = kind(`${GROUP}/v1alpha1`, 'Gadget');
const CRD = kind('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
const Validating = kind('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration');
const Mutating = kind('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration');

/** One call of the API server to the webhook: what it sent and what the webhook answered. */
export interface Exchange {
  readonly path: string;
  readonly query: string;
  readonly request: Record<string, unknown>;
  readonly response: Record<string, unknown>;
}

/** What the client saw of one step: the HTTP code, the `Warning` headers and the body (object or Status). */
export interface ClientOutcome {
  readonly code: number;
  readonly warnings: string[];
  readonly body: unknown;
}

/** One recorded step: the client's view and the webhook calls the step caused (in arrival order). */
export interface GoldenStep {
  readonly step: string;
  readonly client: ClientOutcome;
  readonly exchanges: Exchange[];
}

/** The recording webhook server. */
export interface Recorder {
  readonly url: string;
  readonly caPem: string;
  take(): Exchange[];
  close(): Promise<void>;
}

const nameOf = (o: unknown): string =>
  String(((o as KubeObject | null)?.metadata as { name?: string } | undefined)?.name ?? '');

/** The admission answer the recorder gives: by the object's name (denied, warned, mutated on create). */
function admit(path: string, request: Record<string, unknown>): Record<string, unknown> {
  const uid = request.uid;
  const name = nameOf(request.object) || nameOf(request.oldObject) || String(request.name ?? '');
  if (path === '/mutate') {
    if (request.operation !== 'CREATE') return { uid, allowed: true };
    const patch = [{ op: 'add', path: '/metadata/labels/mutated', value: 'true' }];
    return {
      uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
    };
  }
  if (name === 'denied')
    return {
      uid,
      allowed: false,
      status: {
        status: 'Failure',
        code: 422,
        reason: 'Invalid',
        message:
          'Gadget.golden.kubeloop.io "denied" is invalid: spec.size: Invalid value: -1: must be positive',
        details: {
          name: 'denied',
          group: GROUP,
          kind: 'Gadget',
          causes: [
            {
              reason: 'FieldValueInvalid',
              message: 'Invalid value: -1: must be positive',
              field: 'spec.size',
            },
          ],
        },
      },
      warnings: ['denied gadgets warn too'],
    };
  if (name === 'warned')
    return { uid, allowed: true, warnings: ['golden warning one', 'golden warning two'] };
  return { uid, allowed: true };
}

/**
 * The conversion answer: v1alpha1 `spec.count` is v1 `spec.size` (so an object only relabelled shows); an object
 * labelled `convert: fail` fails the whole review.
 */
function convert(request: Record<string, unknown>): Record<string, unknown> {
  const objects = (request.objects as KubeObject[]) ?? [];
  if (objects.some((o) => o.metadata?.labels?.convert === 'fail'))
    return {
      uid: request.uid,
      result: { status: 'Failure', message: 'golden conversion failure: convert=fail' },
      convertedObjects: [],
    };
  return {
    uid: request.uid,
    result: { status: 'Success' },
    convertedObjects: objects.map((o) => {
      const has = (o as { spec?: Record<string, unknown> }).spec;
      const { count, size, ...rest } = has ?? {};
      const toAlpha = request.desiredAPIVersion === GadgetAlpha.apiVersion;
      const n = toAlpha ? size : count;
      const spec = { ...rest, ...(n !== undefined ? { [toAlpha ? 'count' : 'size']: n } : {}) };
      return { ...o, apiVersion: request.desiredAPIVersion, ...(has ? { spec } : {}) };
    }),
  };
}

/** Starts the recording webhook server on 127.0.0.1 (a fresh CA and serving certificate). */
export async function startRecorder(): Promise<Recorder> {
  const { ca, serving }: { ca: PemPair; serving: PemPair } = await loopbackPki();
  let seen: Exchange[] = [];
  const server: Server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [path = '', query = ''] = (req.url ?? '').split('?');
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const request = review.request as Record<string, unknown>;
      const response =
        path === '/convert'
          ? { apiVersion: review.apiVersion, kind: 'ConversionReview', response: convert(request) }
          : { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: admit(path, request) };
      seen.push({ path, query, request: review, response });
      const text = JSON.stringify(response);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    caPem: splitPem(ca.cert)[0] ?? ca.cert,
    take: () => {
      const out = seen;
      seen = [];
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The version's schema: v1 counts in `spec.size`, v1alpha1 in `spec.count`. */
const schemaOf = (field: 'size' | 'count') => ({
  openAPIV3Schema: {
    type: 'object',
    properties: {
      spec: { type: 'object', properties: { [field]: { type: 'integer' } } },
      status: { type: 'object', properties: { ready: { type: 'boolean' } } },
    },
  },
});

/** Creates the CRD (conversion through the recorder) and both webhook configurations scoped to `namespace`. */
export async function installGolden(client: ApiClient, recorder: Recorder, namespace: string): Promise<void> {
  const caBundle = Buffer.from(recorder.caPem).toString('base64');
  const exists = await client.get(CRD, { name: CRD_NAME }).then(
    () => true,
    () => false,
  );
  if (!exists)
    await client.create(CRD, {
      apiVersion: CRD.apiVersion,
      kind: CRD.kind,
      metadata: { name: CRD_NAME },
      spec: {
        group: GROUP,
        names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
        scope: 'Namespaced',
        versions: [
          { name: 'v1alpha1', served: true, storage: false, schema: schemaOf('count') },
          { name: 'v1', served: true, storage: true, schema: schemaOf('size'), subresources: { status: {} } },
        ],
        conversion: {
          strategy: 'Webhook',
          webhook: {
            conversionReviewVersions: ['v1'],
            clientConfig: { url: `${recorder.url}/convert`, caBundle },
          },
        },
      },
    } as KubeObject);
  else
    await client.patch(
      CRD,
      { name: CRD_NAME },
      {
        type: 'json',
        data: [
          {
            op: 'replace',
            path: '/spec/conversion/webhook/clientConfig',
            value: { url: `${recorder.url}/convert`, caBundle },
          },
        ],
      },
    );
  const webhook = (name: string, path: string) => ({
    name,
    clientConfig: { url: `${recorder.url}${path}`, caBundle },
    rules: [
      {
        apiGroups: [GROUP],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        resources: ['gadgets', 'gadgets/status'],
      },
    ],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    timeoutSeconds: 5,
  });
  for (const [k, path] of [
    [Mutating, '/mutate'],
    [Validating, '/validate'],
  ] as const)
    await client.create(k, {
      apiVersion: k.apiVersion,
      kind: k.kind,
      metadata: { name: `golden-${namespace}` },
      webhooks: [webhook(`${path.slice(1)}.${GROUP}`, path)],
    } as KubeObject);
  // Wait until the CRD serves. A count of 100 tries 100 ms apart gave up after 10 s without a word on a starved
  // process (the steps then failed on a missing resource); the bound is now the callers' 120 s hook or test
  // timeout: the loop ends a little under it, with an error naming the wait, and never polls on after its test.
  const giveUpAt = Date.now() + 110_000;
  for (;;) {
    const ok = await client.list(Gadget, { namespace }).then(
      () => true,
      () => false,
    );
    if (ok) return;
    if (Date.now() > giveUpAt) throw new Error(`the Gadget CRD does not serve in namespace ${namespace}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Deletes what {@link runGoldenSteps} created: the webhook configurations, the CRD and the namespace. */
export async function uninstallGolden(client: ApiClient, namespace: string): Promise<void> {
  for (const k of [Mutating, Validating])
    await client.delete(k, { name: `golden-${namespace}` }).catch(() => undefined);
  await client.delete(CRD, { name: CRD_NAME }).catch(() => undefined);
  await client.delete(Namespace, { name: namespace }).catch(() => undefined);
}

/**
 * Runs the recorded steps in a fresh `namespace` (created here) with webhooks of {@link installGolden}, and
 * returns each step's client outcome and the webhook exchanges it caused.
 */
export async function runGoldenSteps(
  config: RestConfig,
  recorder: Recorder,
  namespace: string,
): Promise<GoldenStep[]> {
  let warnings: string[] = [];
  const client = newClient(config, {
    transport: { warningHandler: { handleWarning: (m) => warnings.push(m) } },
  });
  await client.create(Namespace, { metadata: { name: namespace } });
  await installGolden(client, recorder, namespace);
  const steps: GoldenStep[] = [];
  const gadget = (name: string, extra: Record<string, unknown> = {}, apiVersion = Gadget.apiVersion) =>
    ({
      apiVersion,
      kind: 'Gadget',
      metadata: { name, namespace, labels: { app: 'golden' } },
      spec: { size: 1 },
      ...extra,
    }) as KubeObject;
  const step = async (name: string, run: () => Promise<unknown>): Promise<void> => {
    recorder.take();
    warnings = [];
    let client: ClientOutcome;
    try {
      client = { code: 200, warnings, body: await run() };
    } catch (e) {
      if (!(e instanceof StatusError)) throw e;
      client = { code: e.httpStatus, warnings, body: e.status };
    }
    steps.push({ step: name, client, exchanges: recorder.take() });
  };
  await step('create', () => client.create(Gadget, gadget('plain')));
  await step('create-dry-run', () => client.create(Gadget, gadget('dry'), { dryRun: true }));
  await step('create-warned', () => client.create(Gadget, gadget('warned')));
  await step('create-denied', () => client.create(Gadget, gadget('denied', { spec: { size: -1 } })));
  await step('update', async () => {
    const cur = await client.get(Gadget, { namespace, name: 'plain' });
    return client.update(Gadget, { ...cur, spec: { size: 2 } } as KubeObject);
  });
  await step('update-status', async () => {
    const cur = await client.get(Gadget, { namespace, name: 'plain' });
    return client.status().update(Gadget, { ...cur, status: { ready: true } } as KubeObject);
  });
  await step('delete', () => client.delete(Gadget, { namespace, name: 'plain' }));
  await step('get-v1alpha1', () => client.get(GadgetAlpha, { namespace, name: 'warned' }));
  // a write through v1alpha1: the webhooks, whose rules name v1, get the object as the conversion makes it
  await step('create-v1alpha1', () =>
    client.create(GadgetAlpha, gadget('alpha', { spec: { count: 3 } }, GadgetAlpha.apiVersion)),
  );
  await step('create-v1alpha1-conversion-fails', () =>
    client.create(
      GadgetAlpha,
      gadget(
        'convfail',
        { metadata: { name: 'convfail', namespace, labels: { convert: 'fail' } }, spec: { count: 1 } },
        GadgetAlpha.apiVersion,
      ),
    ),
  );
  return steps;
}
