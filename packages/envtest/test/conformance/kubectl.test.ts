/**
 * Conformance with the real `kubectl` (v1.32 here): every command is run as a child process against a fresh
 * envtest server over HTTPS with a token, with a fresh `--cache-dir`, and each test checks both kubectl's output
 * and the server's state, read back over HTTPS.
 */
import { chmodSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { loadGolden, WIRE_MISSING, WIRE_REQUIRED } from '../support/golden.js';
import { Kubectl, kubectlMissingReason } from '../support/kubectl.js';
import { waitFor } from '../support/wait.js';

const missing = kubectlMissingReason();
const NS = 'kc';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

function pod(name: string, labels: Record<string, string>, ns = NS): string {
  const l = Object.entries(labels)
    .map(([k, v]) => `    ${k}: "${v}"`)
    .join('\n');
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
  labels:
${l}
spec:
  containers:
  - name: c1
    image: registry.k8s.io/pause:3.10
  - name: c2
    image: registry.k8s.io/pause:3.10
`;
}

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList, shortNames: [gd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              color: {type: string}
          status:
            type: object
            properties:
              ready: {type: boolean}
`;

/** Splits concatenated JSON objects (as kubectl prints watch events with -o json) and parses each. */
function splitJsonObjects(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}') {
      depth--;
      if (depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return out;
}

describe.skipIf(missing !== undefined)(
  `kubectl conformance${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let cluster: TestCluster;
    let kubectl: Kubectl;

    const names = async (path: string): Promise<string[]> => {
      const r = await cluster.get(path);
      expect(r.status).toBe(200);
      return (r.body.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name).sort();
    };

    beforeAll(async () => {
      cluster = await startCluster();
      kubectl = new Kubectl(cluster.kubeconfigPath);
      const ns = await cluster.send('POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NS },
      });
      expect(ns.status).toBe(201);
      const ns2 = await cluster.send('POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'kc2' },
      });
      expect(ns2.status).toBe(201);
    }, 60_000);

    afterAll(async () => {
      await kubectl?.dispose();
      await cluster?.stop();
    });

    /** The pods `create -f` makes (kc/p1, kc/p2, kc2/p3), as kubectl creates them (manager kubectl-create). */
    const FIXTURE_PODS: Array<[string, Record<string, string>, string]> = [
      ['p1', { app: 'web', tier: 'a' }, NS],
      ['p2', { app: 'db' }, NS],
      ['p3', { app: 'web' }, 'kc2'],
    ];
    async function deleteAllPods(): Promise<void> {
      for (const item of (await cluster.get('/api/v1/pods')).body.items as Array<{
        metadata: Record<string, string>;
      }>) {
        const { namespace, name } = item.metadata;
        await cluster.send('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`, {
          gracePeriodSeconds: 0,
        });
      }
      expect((await cluster.get('/api/v1/pods')).body.items).toEqual([]);
    }
    // Each test starts from the same pods, whatever ran before (--sequence.shuffle): every pod in the cluster
    // is removed and the three fixture pods are made afresh.
    beforeEach(async () => {
      await deleteAllPods();
      for (const [name, labels, ns] of FIXTURE_PODS) {
        const r = await cluster.send(
          'POST',
          `/api/v1/namespaces/${ns}/pods?fieldManager=kubectl-create`,
          parseYaml(pod(name, labels, ns)),
        );
        expect(r.status).toBe(201);
      }
    });

    /** The gadgets CRD of the CRD tests, created with kubectl when missing, and Established. */
    async function ensureGadgetCrd(): Promise<void> {
      const path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com';
      if ((await cluster.get(path)).status === 404)
        await kubectl.ok(['create', '-f', kubectl.file('crd.yaml', CRD)]);
      await kubectl.ok([
        'wait',
        '--for',
        'condition=Established',
        'crd/gadgets.example.com',
        '--timeout',
        '20s',
      ]);
    }

    it('api-resources lists the served resources with their group, scope and kind', async () => {
      const out = await kubectl.ok(['api-resources']);
      const rows = out.trim().split('\n');
      expect(rows[0]).toMatch(/^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND/);
      const row = (name: string) => rows.find((r) => r.split(/\s+/)[0] === name) ?? '';
      expect(row('pods')).toMatch(/^pods\s+po\s+v1\s+true\s+Pod$/);
      expect(row('namespaces')).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace$/);
      expect(row('deployments')).toMatch(/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/);
      expect(row('leases')).toMatch(/^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/);
      expect(row('customresourcedefinitions')).toMatch(
        /apiextensions\.k8s\.io\/v1\s+false\s+CustomResourceDefinition$/,
      );
      // Every resource the server's discovery lists (and only those) is printed.
      const apiV1 = await cluster.get('/api/v1');
      const core = (apiV1.body.resources as Array<{ name: string }>)
        .filter((r) => !r.name.includes('/'))
        .map((r) => r.name);
      for (const r of core) expect(row(r), `api-resources misses ${r}`).not.toBe('');
    });

    it.skipIf(WIRE_MISSING !== undefined && !WIRE_REQUIRED)(
      'api-resources lists exactly the resources of the recorded kube-apiserver 1.32 discovery',
      async () => {
        // expected rows from the recorded aggregated discovery (the preferred, first, version of each group)
        const expected: string[] = [];
        for (const [file, core] of [
          ['discovery-api-aggregated', true],
          ['discovery-apis-aggregated', false],
        ] as const) {
          const doc = loadGolden(file).response.body as {
            items: {
              metadata: { name?: string };
              versions: {
                version: string;
                resources: {
                  resource: string;
                  scope: string;
                  responseKind: { kind: string };
                  shortNames?: string[];
                }[];
              }[];
            }[];
          };
          for (const g of doc.items) {
            const v = g.versions[0]!;
            const gv = core ? v.version : `${g.metadata.name}/${v.version}`;
            for (const r of v.resources)
              expected.push(
                [
                  r.resource,
                  (r.shortNames ?? []).join(','),
                  gv,
                  r.scope === 'Namespaced',
                  r.responseKind.kind,
                ].join(' '),
              );
          }
        }
        const out = await kubectl.ok(['api-resources', '--no-headers']);
        const got = out
          .trim()
          .split('\n')
          .map((l) => {
            const cols = l.trim().split(/\s+/);
            // SHORTNAMES is blank for many resources: NAME [SHORTNAMES] APIVERSION NAMESPACED KIND
            return cols.length === 5 ? cols.join(' ') : [cols[0], '', ...cols.slice(1)].join(' ');
          })
          // the built-in resources: the gadgets CRD of the CRD tests may be there, in any test order
          .filter((row) => row.split(' ')[2] !== 'example.com/v1');
        expect(got.sort()).toEqual(expected.sort());
      },
    );

    it('create -f creates pods the server then holds', async () => {
      await deleteAllPods();
      const f = kubectl.file(
        'pods.yaml',
        [pod('p1', { app: 'web', tier: 'a' }), pod('p2', { app: 'db' })].join('---\n'),
      );
      const out = await kubectl.ok(['create', '-f', f]);
      expect(out).toContain('pod/p1 created');
      expect(out).toContain('pod/p2 created');
      expect(await names(PODS)).toEqual(['p1', 'p2']);
      const p3 = kubectl.file('p3.yaml', pod('p3', { app: 'web' }, 'kc2'));
      expect(await kubectl.ok(['create', '-f', p3])).toContain('pod/p3 created');
      // A second create of the same object is refused with AlreadyExists.
      const again = await kubectl.run(['create', '-f', p3]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('AlreadyExists');
      expect(again.stderr).toContain('pods "p3" already exists');
    });

    it('get prints a table of the pods the server lists', async () => {
      const out = await kubectl.ok(['get', 'pods', '-n', NS]);
      const lines = out.trim().split('\n');
      expect(lines[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
      expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(await names(PODS));
      expect(lines[1]).toMatch(/^p1\s+0\/2\s+Pending\s+0\s+\S+$/);
    });

    it('get -o json returns the server objects', async () => {
      const out = JSON.parse(await kubectl.ok(['get', 'pods', '-n', NS, '-o', 'json']));
      expect(out.kind).toBe('List');
      const server = await cluster.get(PODS);
      const byName = new Map(
        (server.body.items as Array<{ metadata: { name: string; uid: string } }>).map((i) => [
          i.metadata.name,
          i,
        ]),
      );
      expect(out.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort()).toEqual(
        [...byName.keys()].sort(),
      );
      for (const item of out.items) {
        expect(item.metadata.uid).toBe(byName.get(item.metadata.name)?.metadata.uid);
        expect(item.kind).toBe('Pod');
      }
    });

    it('get -A shows every namespace; -l and --field-selector filter on the server', async () => {
      const all = (await kubectl.ok(['get', 'pods', '-A'])).trim().split('\n');
      expect(all[0]).toMatch(/^NAMESPACE\s+NAME\s+/);
      const pairs = all.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join('/'));
      expect(pairs.sort()).toEqual(['kc/p1', 'kc/p2', 'kc2/p3']);
      const serverAll = await cluster.get('/api/v1/pods');
      expect(serverAll.body.items).toHaveLength(3);

      const web = (await kubectl.ok(['get', 'pods', '-A', '-l', 'app=web', '-o', 'name'])).trim().split('\n');
      expect(web.sort()).toEqual(['pod/p1', 'pod/p3']);
      const notWeb = (
        await kubectl.ok(['get', 'pods', '-n', NS, '-l', 'app notin (web),!missing', '-o', 'name'])
      ).trim();
      expect(notWeb).toBe('pod/p2');

      const byName = (
        await kubectl.ok(['get', 'pods', '-n', NS, '--field-selector', 'metadata.name=p2', '-o', 'name'])
      ).trim();
      expect(byName).toBe('pod/p2');
      const pending = (
        await kubectl.ok([
          'get',
          'pods',
          '-A',
          '--field-selector',
          'status.phase=Pending,spec.nodeName=',
          '-o',
          'name',
        ])
      )
        .trim()
        .split('\n');
      expect(pending).toHaveLength(3);
      const bad = await kubectl.run(['get', 'pods', '-n', NS, '--field-selector', 'spec.foo=bar']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('field label not supported: spec.foo');
    });

    it('get -w streams the changes made at the server', async () => {
      const w = kubectl.stream(['get', 'pods', '-n', NS, '-w']);
      try {
        await w.waitForLine((l) => l.startsWith('p1 '), 'the initial p1 row');
        const created = await cluster.send('POST', PODS, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'pw' },
          spec: { containers: [{ name: 'c1', image: 'registry.k8s.io/pause:3.10' }] },
        });
        expect(created.status).toBe(201);
        await w.waitForLine((l) => l.startsWith('pw '), 'the row of pw after it was created');
        const del = await cluster.send('DELETE', `${PODS}/pw`, {});
        expect(del.status).toBe(200);
        const rows = w.lines.filter((l) => l.startsWith('pw '));
        expect(rows[0]).toMatch(/^pw\s+0\/1\s+Pending\s+0\s+\S+$/);
      } finally {
        await w.stop();
      }
      expect((await cluster.get(`${PODS}/pw`)).status).toBe(404);
    });

    it('get --chunk-size pages through the list with continue tokens; get -w --output-watch-events -o json', async () => {
      const full = (await kubectl.ok(['get', 'pods', '-A', '-o', 'name'])).trim().split('\n');
      expect(full.length).toBeGreaterThanOrEqual(3);
      const logBefore = cluster.requests().length;
      const chunked = (await kubectl.ok(['get', 'pods', '-A', '--chunk-size=1', '-o', 'name']))
        .trim()
        .split('\n');
      expect(chunked).toEqual(full);
      // One request per page: kubectl followed the continue tokens.
      const pages = cluster
        .requests()
        .slice(logBefore)
        .filter((r) => r.path === '/api/v1/pods' && new URLSearchParams(r.query).get('limit') === '1');
      expect(pages).toHaveLength(full.length);
      expect(pages.filter((r) => new URLSearchParams(r.query).has('continue'))).toHaveLength(full.length - 1);

      const w = kubectl.stream([
        'get',
        'configmaps',
        '-n',
        NS,
        '-w',
        '--watch-only',
        '--output-watch-events',
        '-o',
        'json',
      ]);
      try {
        const watchesBefore = cluster.activeWatches();
        await waitFor(
          () => cluster.activeWatches() > watchesBefore,
          20_000,
          'kubectl get -w to open its watch',
        );
        await cluster.send('POST', CMS, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'watched' },
        });
        await cluster.send('DELETE', `${CMS}/watched`, {});
        await waitFor(
          () => {
            const text = w.lines.join('\n');
            return text.includes('"DELETED"') ? text : undefined;
          },
          20_000,
          'the DELETED event',
        );
      } finally {
        await w.stop();
      }
      // kubectl prints each event as a pretty-printed JSON object, one after the other.
      const events = splitJsonObjects(w.lines.join('\n')) as Array<{
        type: string;
        object: { kind: string; metadata: { name: string } };
      }>;
      expect(events.map((e) => `${e.type} ${e.object.kind} ${e.object.metadata.name}`)).toEqual([
        'ADDED ConfigMap watched',
        'DELETED ConfigMap watched',
      ]);
    });

    it('apply -f (client-side) twice creates, then patches; unchanged input is a no-op', async () => {
      const cm = (v: string) =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: ${NS}\ndata:\n  k: ${v}\n`;
      expect(await kubectl.ok(['apply', '-f', kubectl.file('cm1.yaml', cm('v1'))])).toContain(
        'configmap/applied created',
      );
      const first = await cluster.get(`${CMS}/applied`);
      expect(first.body.data).toEqual({ k: 'v1' });
      expect(first.body.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toContain(
        '"v1"',
      );

      expect(await kubectl.ok(['apply', '-f', kubectl.file('cm2.yaml', cm('v2'))])).toContain(
        'configmap/applied configured',
      );
      const second = await cluster.get(`${CMS}/applied`);
      expect(second.body.data).toEqual({ k: 'v2' });
      expect(second.body.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toContain(
        '"v2"',
      );
      expect(Number(second.body.metadata.resourceVersion)).toBeGreaterThan(
        Number(first.body.metadata.resourceVersion),
      );
      const managers = (second.body.metadata.managedFields as Array<{ manager: string }>).map(
        (m) => m.manager,
      );
      expect(managers).toContain('kubectl-client-side-apply');

      expect(await kubectl.ok(['apply', '-f', kubectl.file('cm3.yaml', cm('v2'))])).toContain(
        'configmap/applied unchanged',
      );
      const third = await cluster.get(`${CMS}/applied`);
      expect(third.body.metadata.resourceVersion).toBe(second.body.metadata.resourceVersion);
    });

    it('apply --server-side records an Apply manager and reports conflicts with another manager', async () => {
      const cm = (v: string) =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: ${NS}\ndata:\n  k: ${v}\n`;
      expect(
        await kubectl.ok(['apply', '--server-side', '-f', kubectl.file('ssa1.yaml', cm('a'))]),
      ).toContain('configmap/ssa serverside-applied');
      const live = await cluster.get(`${CMS}/ssa`);
      expect(live.body.data).toEqual({ k: 'a' });
      const entry = (live.body.metadata.managedFields as Array<Record<string, unknown>>).find(
        (m) => m.manager === 'kubectl',
      );
      expect(entry?.operation).toBe('Apply');

      const conflict = await kubectl.run([
        'apply',
        '--server-side',
        '--field-manager',
        'other',
        '-f',
        kubectl.file('ssa2.yaml', cm('b')),
      ]);
      expect(conflict.code).not.toBe(0);
      expect(conflict.stderr).toContain('conflict');
      expect((await cluster.get(`${CMS}/ssa`)).body.data).toEqual({ k: 'a' });

      await kubectl.ok([
        'apply',
        '--server-side',
        '--force-conflicts',
        '--field-manager',
        'other',
        '-f',
        kubectl.file('ssa3.yaml', cm('b')),
      ]);
      expect((await cluster.get(`${CMS}/ssa`)).body.data).toEqual({ k: 'b' });
    });

    it('label and annotate add and remove metadata on the server object', async () => {
      expect(await kubectl.ok(['label', 'pod', 'p1', '-n', NS, 'x=y'])).toContain('pod/p1 labeled');
      expect((await cluster.get(`${PODS}/p1`)).body.metadata.labels).toEqual({
        app: 'web',
        tier: 'a',
        x: 'y',
      });
      const clash = await kubectl.run(['label', 'pod', 'p1', '-n', NS, 'x=z']);
      expect(clash.code).not.toBe(0);
      expect(clash.stderr).toContain("'x' already has a value (y)");
      await kubectl.ok(['label', 'pod', 'p1', '-n', NS, 'x-']);
      expect((await cluster.get(`${PODS}/p1`)).body.metadata.labels).toEqual({ app: 'web', tier: 'a' });

      expect(await kubectl.ok(['annotate', 'pod', 'p1', '-n', NS, 'note=hello world'])).toContain(
        'pod/p1 annotated',
      );
      const p1 = await cluster.get(`${PODS}/p1`);
      expect(p1.body.metadata.annotations).toEqual({ note: 'hello world' });
      const managers = (p1.body.metadata.managedFields as Array<{ manager: string }>).map((m) => m.manager);
      // kubectl-label owned only `x`, which it removed: as upstream, a manager left owning nothing is dropped.
      expect(managers.sort()).toEqual(['kubectl-annotate', 'kubectl-create']);
    });

    it('patch: strategic merges containers by name, merge and json patches apply as specified', async () => {
      const before = await cluster.get(`${PODS}/p1`);
      expect(
        await kubectl.ok([
          'patch',
          'pod',
          'p1',
          '-n',
          NS,
          '-p',
          '{"spec":{"containers":[{"name":"c2","image":"registry.k8s.io/pause:3.9"}]}}',
        ]),
      ).toContain('pod/p1 patched');
      const smp = await cluster.get(`${PODS}/p1`);
      expect(
        smp.body.spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`),
      ).toEqual(['c1=registry.k8s.io/pause:3.10', 'c2=registry.k8s.io/pause:3.9']);
      expect(smp.body.metadata.uid).toBe(before.body.metadata.uid);

      await kubectl.ok([
        'patch',
        'pod',
        'p1',
        '-n',
        NS,
        '--type',
        'merge',
        '-p',
        '{"metadata":{"labels":{"tier":null,"m":"1"}}}',
      ]);
      expect((await cluster.get(`${PODS}/p1`)).body.metadata.labels).toEqual({ app: 'web', m: '1' });

      await kubectl.ok([
        'patch',
        'pod',
        'p1',
        '-n',
        NS,
        '--type',
        'json',
        '-p',
        '[{"op":"add","path":"/metadata/labels/j","value":"2"},{"op":"remove","path":"/metadata/labels/m"}]',
      ]);
      expect((await cluster.get(`${PODS}/p1`)).body.metadata.labels).toEqual({ app: 'web', j: '2' });

      const failing = await kubectl.run([
        'patch',
        'pod',
        'p1',
        '-n',
        NS,
        '--type',
        'json',
        '-p',
        '[{"op":"test","path":"/metadata/labels/app","value":"nope"}]',
      ]);
      expect(failing.code).not.toBe(0);
      expect((await cluster.get(`${PODS}/p1`)).body.metadata.labels).toEqual({ app: 'web', j: '2' });
    });

    it('delete removes a pod; delete -l removes exactly the matching configmaps', async () => {
      expect(await kubectl.ok(['delete', 'pod', 'p2', '-n', NS])).toContain('pod "p2" deleted');
      expect((await cluster.get(`${PODS}/p2`)).status).toBe(404);

      for (const [name, group] of [
        ['d1', 'g1'],
        ['d2', 'g1'],
        ['d3', 'g2'],
      ] as const) {
        const r = await cluster.send('POST', CMS, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, labels: { group } },
        });
        expect(r.status).toBe(201);
      }
      const out = await kubectl.ok(['delete', 'configmaps', '-n', NS, '-l', 'group=g1']);
      expect(out).toContain('configmap "d1" deleted');
      expect(out).toContain('configmap "d2" deleted');
      expect(out).not.toContain('d3');
      expect(await names(`${CMS}?labelSelector=group`)).toEqual(['d3']);
    });

    it('delete of an object with a finalizer waits until the finalizer is removed', async () => {
      const created = await cluster.send('POST', CMS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'fin', finalizers: ['example.com/hold'] },
      });
      expect(created.status).toBe(201);
      const watchesBeforeDelete = cluster.activeWatches();
      const del = kubectl.stream(['delete', 'configmap', 'fin', '-n', NS]);
      try {
        const terminating = await waitFor(
          async () => {
            const r = await cluster.get(`${CMS}/fin`);
            return r.status === 200 && r.body.metadata.deletionTimestamp ? r.body : undefined;
          },
          20_000,
          'fin to be terminating',
        );
        expect(terminating.metadata.finalizers).toEqual(['example.com/hold']);
        await del.waitForLine((l) => l.includes('configmap "fin" deleted'), 'the deleted message');
        // kubectl then waits for the deletion on a watch; release the finalizer only once that watch is open.
        await waitFor(
          () => cluster.activeWatches() > watchesBeforeDelete,
          20_000,
          'kubectl delete to watch the terminating object',
        );
        // kubectl keeps waiting (a watch on the object) while the finalizer holds it.
        expect(del.lines.join('\n')).not.toContain('error');
        const removed = await cluster.send(
          'PATCH',
          `${CMS}/fin`,
          { metadata: { finalizers: null } },
          'application/merge-patch+json',
        );
        expect(removed.status).toBe(200);
        expect(await del.exited).toBe(0);
      } finally {
        await del.stop();
      }
      expect((await cluster.get(`${CMS}/fin`)).status).toBe(404);

      // The same with kubectl removing the finalizer itself.
      await cluster.send('POST', CMS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'fin2', finalizers: ['example.com/hold'] },
      });
      expect(await kubectl.ok(['delete', 'configmap', 'fin2', '-n', NS, '--wait=false'])).toContain(
        'configmap "fin2" deleted',
      );
      expect((await cluster.get(`${CMS}/fin2`)).body.metadata.deletionTimestamp).toBeTruthy();
      await kubectl.ok([
        'patch',
        'configmap',
        'fin2',
        '-n',
        NS,
        '--type',
        'merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
      ]);
      expect((await cluster.get(`${CMS}/fin2`)).status).toBe(404);
    });

    it('creates a CRD, then gets its custom resources by plural and short name', async () => {
      const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com';
      if ((await cluster.get(crdPath)).status === 200) {
        await cluster.send('DELETE', crdPath, {});
        await waitFor(
          async () => ((await cluster.get(crdPath)).status === 404 ? true : undefined),
          20_000,
          'the CRD gone',
        );
      }
      expect(await kubectl.ok(['create', '-f', kubectl.file('crd.yaml', CRD)])).toContain(
        'customresourcedefinition.apiextensions.k8s.io/gadgets.example.com created',
      );
      await kubectl.ok([
        'wait',
        '--for',
        'condition=Established',
        'crd/gadgets.example.com',
        '--timeout',
        '20s',
      ]);
      const crd = await cluster.get(
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com',
      );
      expect(crd.body.status.conditions.find((c: { type: string }) => c.type === 'Established')?.status).toBe(
        'True',
      );

      const gadget = `apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g1\n  namespace: ${NS}\nspec:\n  color: red\n`;
      expect(await kubectl.ok(['create', '-f', kubectl.file('g1.yaml', gadget)])).toContain(
        'gadget.example.com/g1 created',
      );
      const live = await cluster.get(`/apis/example.com/v1/namespaces/${NS}/gadgets/g1`);
      expect(live.status).toBe(200);
      expect(live.body.spec).toEqual({ color: 'red' });

      const table = (await kubectl.ok(['get', 'gadgets', '-n', NS])).trim().split('\n');
      // With additionalPrinterColumns no Age column is added (as kube-apiserver: golden cr-list-table).
      expect(table[0]).toMatch(/^NAME\s+COLOR$/);
      expect(table[1]).toMatch(/^g1\s+red$/);
      expect((await kubectl.ok(['get', 'gd', '-n', NS, '-o', 'name'])).trim()).toBe('gadget.example.com/g1');
      const json = JSON.parse(await kubectl.ok(['get', 'gadget', 'g1', '-n', NS, '-o', 'json']));
      expect(json.metadata.uid).toBe(live.body.metadata.uid);
    });

    it('apply -f on a custom resource twice (kubectl sends a JSON merge patch), and strict validation of CRs', async () => {
      await ensureGadgetCrd();
      await cluster.send('DELETE', `/apis/example.com/v1/namespaces/${NS}/gadgets/g2`, {});
      const gadget = (color: string) =>
        `apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g2\n  namespace: ${NS}\nspec:\n  color: ${color}\n`;
      expect(await kubectl.ok(['apply', '-f', kubectl.file('g2a.yaml', gadget('blue'))])).toContain(
        'gadget.example.com/g2 created',
      );
      expect(await kubectl.ok(['apply', '-f', kubectl.file('g2b.yaml', gadget('green'))])).toContain(
        'gadget.example.com/g2 configured',
      );
      const live = await cluster.get(`/apis/example.com/v1/namespaces/${NS}/gadgets/g2`);
      expect(live.body.spec).toEqual({ color: 'green' });
      expect(live.body.metadata.generation).toBe(2);

      const bogus = `apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g3\n  namespace: ${NS}\nspec:\n  color: red\n  bogus: 1\n`;
      const refused = await kubectl.run(['create', '-f', kubectl.file('g3.yaml', bogus)]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('bogus');
      expect((await cluster.get(`/apis/example.com/v1/namespaces/${NS}/gadgets/g3`)).status).toBe(404);
    });

    it('version reports the server version; a wrong token gets the Unauthorized error', async () => {
      const v = JSON.parse(await kubectl.ok(['version', '-o', 'json']));
      const server = await cluster.get('/version');
      expect(v.serverVersion.gitVersion).toBe(server.body.gitVersion);
      expect(v.serverVersion.gitVersion).toMatch(/^v1\.32\./);

      const kc = readFileSync(cluster.kubeconfigPath, 'utf8');
      const doc = parseYaml(kc) as { users: Array<{ user: { token?: string } }> };
      for (const u of doc.users) if (u.user.token) u.user.token = 'wrong-token';
      const bad = new Kubectl(kubectl.file('bad-kubeconfig.yaml', stringifyYaml(doc)));
      try {
        const r = await bad.run(['get', 'pods', '-n', NS]);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain('You must be logged in to the server');
      } finally {
        await bad.dispose();
      }
    });

    it('get -o wide prints the priority-1 columns; get pod NAME -w follows one object', async () => {
      const wide = (await kubectl.ok(['get', 'pods', '-n', NS, '-o', 'wide'])).trim().split('\n');
      expect(wide[0]).toMatch(
        /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/,
      );
      expect(wide[1]).toMatch(/^p1\s+0\/2\s+Pending\s+0\s+\S+\s+<none>\s+<none>\s+<none>\s+<none>$/);

      const w = kubectl.stream([
        'get',
        'pod',
        'p1',
        '-n',
        NS,
        '-w',
        '-o',
        'custom-columns=NAME:.metadata.name,L:.metadata.labels.watched',
      ]);
      try {
        await w.waitForLine((l) => /^p1\s+<none>$/.test(l), 'the initial p1 row');
        const r = await cluster.send(
          'PATCH',
          `${PODS}/p1`,
          { metadata: { labels: { watched: 'yes' } } },
          'application/merge-patch+json',
        );
        expect(r.status).toBe(200);
        await w.waitForLine((l) => /^p1\s+yes$/.test(l), 'the row after the label change');
        // Changes to other pods do not show up in a single-object watch.
        expect(w.lines.every((l) => l.startsWith('p1') || l.startsWith('NAME'))).toBe(true);
      } finally {
        await w.stop();
      }
    });

    it('deployments: create, scale through /scale, patch --subresource=status, get table', async () => {
      const DEPLOY = `/apis/apps/v1/namespaces/${NS}/deployments`;
      // From a manifest: `kubectl create deployment` sends a protobuf body, which envtest does not decode (README).
      const manifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${NS}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: pause
        image: registry.k8s.io/pause:3.10
`;
      expect(await kubectl.ok(['create', '-f', kubectl.file('deploy.yaml', manifest)])).toContain(
        'deployment.apps/web created',
      );
      const created = await cluster.get(`${DEPLOY}/web`);
      expect(created.body.metadata.generation).toBe(1);
      expect(created.body.spec.replicas).toBe(1);

      expect(await kubectl.ok(['scale', 'deployment', 'web', '-n', NS, '--replicas=3'])).toContain(
        'deployment.apps/web scaled',
      );
      const scaled = await cluster.get(`${DEPLOY}/web`);
      expect(scaled.body.spec.replicas).toBe(3);
      expect(scaled.body.metadata.generation).toBe(2);
      expect((await cluster.get(`${DEPLOY}/web/scale`)).body).toMatchObject({
        kind: 'Scale',
        spec: { replicas: 3 },
      });

      await kubectl.ok([
        'patch',
        'deployment',
        'web',
        '-n',
        NS,
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"replicas":3,"readyReplicas":2,"availableReplicas":2,"updatedReplicas":3},"spec":{"replicas":9}}',
      ]);
      const afterStatus = await cluster.get(`${DEPLOY}/web`);
      expect(afterStatus.body.status.readyReplicas).toBe(2);
      expect(afterStatus.body.spec.replicas).toBe(3);
      expect(afterStatus.body.metadata.generation).toBe(2);

      const table = (await kubectl.ok(['get', 'deploy', '-n', NS])).trim().split('\n');
      expect(table[0]).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/);
      // its row (the generator test's deployment may share the namespace, in any test order)
      expect(table.find((l) => l.startsWith('web '))).toMatch(/^web\s+2\/3\s+3\s+2\s+\S+$/);
    });

    it('edit, replace, diff and -f - round-trip through the server', async () => {
      const created = await cluster.send('POST', CMS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ed', labels: { keep: 'me' } },
        data: { color: 'red' },
      });
      expect(created.status).toBe(201);
      // kubectl edit: GET, run the editor on the YAML, PATCH the difference.
      const editor = kubectl.file('editor.sh', '#!/bin/sh\nsed -i "s/color: red/color: blue/" "$1"\n');
      chmodSync(editor, 0o755);
      expect(
        await kubectl.ok(['edit', 'configmap', 'ed', '-n', NS], { env: { KUBE_EDITOR: editor } }),
      ).toContain('configmap/ed edited');
      const edited = await cluster.get(`${CMS}/ed`);
      expect(edited.body.data).toEqual({ color: 'blue' });
      expect(edited.body.metadata.labels).toEqual({ keep: 'me' });

      // kubectl diff: a server-side dry-run apply; exit 1 and a diff when the live object differs, nothing stored.
      const manifest = (color: string) =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ed\n  namespace: ${NS}\n  labels:\n    keep: me\ndata:\n  color: ${color}\n`;
      const diff = await kubectl.run(['diff', '-f', kubectl.file('diff.yaml', manifest('green'))]);
      expect(diff.stderr).toBe('');
      expect(diff.code).toBe(1);
      expect(diff.stdout).toMatch(/^-\s+color: blue$/m);
      expect(diff.stdout).toMatch(/^\+\s+color: green$/m);
      expect((await cluster.get(`${CMS}/ed`)).body.data).toEqual({ color: 'blue' });

      // kubectl replace: PUT of the whole object (read from stdin).
      expect(await kubectl.ok(['replace', '-f', '-'], { stdin: manifest('green') })).toContain(
        'configmap/ed replaced',
      );
      const replaced = await cluster.get(`${CMS}/ed`);
      expect(replaced.body.data).toEqual({ color: 'green' });
      expect(replaced.body.metadata.uid).toBe(created.body.metadata.uid);
    });

    it('output formats: -o yaml, jsonpath, --show-labels, -L and --sort-by read the server objects', async () => {
      const y = parseYaml(await kubectl.ok(['get', 'pod', 'p1', '-n', NS, '-o', 'yaml'])) as {
        metadata: { uid: string; resourceVersion: string };
      };
      const live = await cluster.get(`${PODS}/p1`);
      expect(y.metadata.uid).toBe(live.body.metadata.uid);
      expect(y.metadata.resourceVersion).toBe(live.body.metadata.resourceVersion);
      expect(
        await kubectl.ok(['get', 'pod', 'p1', '-n', NS, '-o', 'jsonpath={.spec.containers[*].name}']),
      ).toBe('c1 c2');
      const shown = (await kubectl.ok(['get', 'pods', '-n', NS, '--show-labels'])).trim().split('\n');
      expect(shown[0]).toMatch(/\sLABELS$/);
      const labels = Object.entries(live.body.metadata.labels as Record<string, string>)
        .map(([k, v]) => `${k}=${v}`)
        .sort()
        .join(',');
      expect(shown.find((l) => l.startsWith('p1 '))).toMatch(new RegExp(`\\s${labels}$`));
      const col = (await kubectl.ok(['get', 'pods', '-n', NS, '-L', 'app'])).trim().split('\n');
      expect(col[0]).toMatch(/\sAPP$/);
      expect(col.find((l) => l.startsWith('p1 '))).toMatch(/\sweb$/);
      // configmaps of its own to sort (created out of order), whatever else the namespace holds
      for (const name of ['sort-b', 'sort-a'])
        expect([201, 409]).toContain((await cluster.send('POST', CMS, { metadata: { name } })).status);
      const sorted = (
        await kubectl.ok(['get', 'configmaps', '-n', NS, '--sort-by=.metadata.name', '-o', 'name'])
      ).trim();
      const server = await names(CMS);
      expect(sorted.split('\n')).toEqual(server.map((n) => `configmap/${n}`));
    });

    it('create with an unknown field is refused under strict validation, warned under --validate=warn', async () => {
      const bad = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict\n  namespace: ${NS}\nbogus: 1\ndata:\n  a: b\n`;
      const strict = await kubectl.run(['create', '-f', kubectl.file('strict.yaml', bad)]);
      expect(strict.code).not.toBe(0);
      expect(strict.stderr).toContain('unknown field "bogus"');
      expect((await cluster.get(`${CMS}/strict`)).status).toBe(404);
      const warn = await kubectl.run(['create', '--validate=warn', '-f', kubectl.file('warn.yaml', bad)]);
      expect(warn.code).toBe(0);
      expect(warn.stderr).toContain('Warning: unknown field "bogus"');
      const stored = await cluster.get(`${CMS}/strict`);
      expect(stored.body.data).toEqual({ a: 'b' });
      expect(stored.body.bogus).toBeUndefined();
    });

    it('wait --for=delete returns once a finalizer is released; get --raw reaches non-resource paths', async () => {
      await cluster.send('POST', CMS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'waited', finalizers: ['example.com/hold'] },
      });
      await kubectl.ok(['delete', 'configmap', 'waited', '-n', NS, '--wait=false']);
      expect((await cluster.get(`${CMS}/waited`)).body.metadata.deletionTimestamp).toBeTruthy();
      const watchesBefore = cluster.activeWatches();
      const waiting = kubectl.stream(['wait', '--for=delete', 'configmap/waited', '-n', NS, '--timeout=30s']);
      try {
        // Release the finalizer only once kubectl waits on a watch (else it could find the object gone at once).
        await waitFor(
          () => cluster.activeWatches() > watchesBefore,
          20_000,
          'kubectl wait to open its watch',
        );
        const removed = await cluster.send(
          'PATCH',
          `${CMS}/waited`,
          { metadata: { finalizers: null } },
          'application/merge-patch+json',
        );
        expect(removed.status).toBe(200);
        expect(await waiting.exited).toBe(0);
        expect(waiting.lines.join('\n')).toContain('configmap/waited condition met');
      } finally {
        await waiting.stop();
      }
      expect((await kubectl.ok(['get', '--raw', '/readyz'])).trim()).toBe('ok');
      const raw = JSON.parse(await kubectl.ok(['get', '--raw', `/api/v1/namespaces/${NS}/pods/p1`]));
      expect(raw.metadata.uid).toBe((await cluster.get(`${PODS}/p1`)).body.metadata.uid);
    });

    // Known gaps, kept as expected failures so that they flip (and must be removed) once envtest closes them.
    it('generator commands send protobuf bodies: create namespace|configmap|secret', async () => {
      expect(await kubectl.ok(['create', 'namespace', 'from-generator'])).toContain(
        'namespace/from-generator created',
      );
      expect((await cluster.get('/api/v1/namespaces/from-generator')).body.status.phase).toBe('Active');
      expect(await kubectl.ok(['create', 'configmap', 'gen', '-n', NS, '--from-literal=a=b'])).toContain(
        'configmap/gen created',
      );
      expect((await cluster.get(`${CMS}/gen`)).body.data).toEqual({ a: 'b' });
      expect(
        await kubectl.ok(['create', 'secret', 'generic', 'gen', '-n', NS, '--from-literal=k=s3cr3t']),
      ).toContain('secret/gen created');
      const secret = await cluster.get(`/api/v1/namespaces/${NS}/secrets/gen`);
      expect(secret.body.type).toBe('Opaque');
      expect(Buffer.from(secret.body.data.k, 'base64').toString()).toBe('s3cr3t');
    });

    it('generator commands send protobuf bodies: create deployment|service', async () => {
      expect(
        await kubectl.ok([
          'create',
          'deployment',
          'gen',
          '-n',
          NS,
          '--image=registry.k8s.io/pause:3.10',
          '--replicas=2',
        ]),
      ).toContain('deployment.apps/gen created');
      const dep = await cluster.get(`/apis/apps/v1/namespaces/${NS}/deployments/gen`);
      expect(dep.body.spec.replicas).toBe(2);
      expect(dep.body.spec.selector).toEqual({ matchLabels: { app: 'gen' } });
      expect(dep.body.spec.template.spec.containers[0]).toMatchObject({
        name: 'pause',
        image: 'registry.k8s.io/pause:3.10',
      });
      expect(
        await kubectl.ok(['create', 'service', 'clusterip', 'gen', '-n', NS, '--tcp=80:8080']),
      ).toContain('service/gen created');
      const svc = await cluster.get(`/api/v1/namespaces/${NS}/services/gen`);
      expect(svc.body.spec.ports[0]).toMatchObject({ port: 80, targetPort: 8080, protocol: 'TCP' });
      expect(svc.body.spec.selector).toEqual({ app: 'gen' });
    });

    it('generator commands of other kinds send protobuf bodies: create serviceaccount|role|rolebinding|job|cronjob|priorityclass', async () => {
      expect(await kubectl.ok(['create', 'serviceaccount', 'gen-sa', '-n', NS])).toContain(
        'serviceaccount/gen-sa created',
      );
      expect(
        await kubectl.ok(['create', 'role', 'gen-role', '-n', NS, '--verb=get,list', '--resource=pods']),
      ).toContain('role.rbac.authorization.k8s.io/gen-role created');
      const role = await cluster.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/gen-role`);
      expect(role.body.rules).toEqual([{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]);
      expect(
        await kubectl.ok([
          'create',
          'rolebinding',
          'gen-rb',
          '-n',
          NS,
          '--role=gen-role',
          `--serviceaccount=${NS}:gen-sa`,
        ]),
      ).toContain('rolebinding.rbac.authorization.k8s.io/gen-rb created');
      const rb = await cluster.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/gen-rb`);
      expect(rb.body.roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'gen-role',
      });
      expect(rb.body.subjects).toEqual([{ kind: 'ServiceAccount', name: 'gen-sa', namespace: NS }]);
      expect(
        await kubectl.ok(['create', 'job', 'gen-job', '-n', NS, '--image=registry.k8s.io/pause:3.10']),
      ).toContain('job.batch/gen-job created');
      const job = await cluster.get(`/apis/batch/v1/namespaces/${NS}/jobs/gen-job`);
      expect(job.body.spec.template.spec.containers[0]).toMatchObject({
        name: 'gen-job',
        image: 'registry.k8s.io/pause:3.10',
      });
      expect(
        await kubectl.ok([
          'create',
          'cronjob',
          'gen-cj',
          '-n',
          NS,
          '--image=registry.k8s.io/pause:3.10',
          '--schedule=*/5 * * * *',
        ]),
      ).toContain('cronjob.batch/gen-cj created');
      const cj = await cluster.get(`/apis/batch/v1/namespaces/${NS}/cronjobs/gen-cj`);
      expect(cj.body.spec.schedule).toBe('*/5 * * * *');
      expect(await kubectl.ok(['create', 'priorityclass', 'gen-pc', '--value=1000'])).toContain(
        'priorityclass.scheduling.k8s.io/gen-pc created',
      );
      expect((await cluster.get('/apis/scheduling.k8s.io/v1/priorityclasses/gen-pc')).body.value).toBe(1000);
      // auth can-i sends a SelfSubjectAccessReview as protobuf; envtest answers reviews with an empty status
      const canI = await kubectl.run(['auth', 'can-i', 'create', 'pods', '-n', NS]);
      expect(canI.stderr).not.toContain('unknown format');
      expect(canI.stdout.trim()).toBe('no');
      await kubectl.ok(['delete', 'priorityclass', 'gen-pc']);
    });

    it('client-side apply of an existing object prints no OpenAPI patch-metadata warning', async () => {
      const cm = (v: string) =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: schema\n  namespace: ${NS}\ndata:\n  k: ${v}\n`;
      await kubectl.ok(['apply', '-f', kubectl.file('schema1.yaml', cm('a'))]);
      const r = await kubectl.run(['apply', '-f', kubectl.file('schema2.yaml', cm('b'))]);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
    });

    it('diff of an unchanged object is empty: empty metadata maps left by a patch are dropped (omitempty)', async () => {
      await cluster.send('POST', CMS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'same' },
        data: { a: 'b' },
      });
      // kubectl diff patches `metadata.annotations: {}` in when the live object has no last-applied annotation.
      const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  namespace: ${NS}\ndata:\n  a: b\n`;
      const same = await kubectl.run(['diff', '-f', kubectl.file('same.yaml', manifest)]);
      expect(same.code, same.stdout).toBe(0);
      const patched = await cluster.send(
        'PATCH',
        `${CMS}/same`,
        { metadata: { annotations: {} } },
        'application/merge-patch+json',
      );
      expect(patched.body.metadata.annotations).toBeUndefined();
    });

    it('explain reads the schemas of the OpenAPI v3 documents (built-in kinds and CRDs)', async () => {
      expect(await kubectl.ok(['explain', 'pods.spec.restartPolicy'])).toContain('FIELD: restartPolicy');
      const containers = await kubectl.ok(['explain', 'pod.spec.containers']);
      expect(containers).toContain('FIELD: containers <[]Container>');
      expect(containers).toMatch(/image\s+<string>/);
      expect(containers).toMatch(/name\s+<string> -required-/);
      const job = await kubectl.ok(['explain', 'jobs.spec.template.spec.containers.imagePullPolicy']);
      expect(job).toContain('FIELD: imagePullPolicy <string>');
    }, 30_000);

    it('create --dry-run=server validates without storing; delete --all empties a namespace', async () => {
      const f = kubectl.file('dry.yaml', pod('dry', { app: 'dry' }));
      expect(await kubectl.ok(['create', '--dry-run=server', '-f', f])).toContain(
        'pod/dry created (server dry run)',
      );
      expect((await cluster.get(`${PODS}/dry`)).status).toBe(404);

      const before = await names('/api/v1/namespaces/kc2/pods');
      expect(before.length).toBeGreaterThan(0);
      const out = await kubectl.ok(['delete', 'pods', '--all', '-n', 'kc2']);
      for (const n of before) expect(out).toContain(`pod "${n}" deleted`);
      expect(await names('/api/v1/namespaces/kc2/pods')).toEqual([]);
      expect(await names(PODS)).toContain('p1');
    });
  },
);
