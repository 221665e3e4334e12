/**
 * Conformance with the real `kubectl` (v1.32 here): every command is run as a child process against a fresh
 * envtest server over HTTPS with a token, with a fresh `--cache-dir`, and each test checks both kubectl's output
 * and the server's state, read back over HTTPS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../support/cluster.js';
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

    it('create -f creates pods the server then holds', async () => {
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
        await w.waitForLine((l) => l.startsWith('p1 '), 20_000, 'the initial p1 row');
        const created = await cluster.send('POST', PODS, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'pw' },
          spec: { containers: [{ name: 'c1', image: 'registry.k8s.io/pause:3.10' }] },
        });
        expect(created.status).toBe(201);
        await w.waitForLine((l) => l.startsWith('pw '), 20_000, 'the row of pw after it was created');
        const del = await cluster.send('DELETE', `${PODS}/pw`, {});
        expect(del.status).toBe(200);
        const rows = w.lines.filter((l) => l.startsWith('pw '));
        expect(rows[0]).toMatch(/^pw\s+0\/1\s+Pending\s+0\s+\S+$/);
      } finally {
        await w.stop();
      }
      expect((await cluster.get(`${PODS}/pw`)).status).toBe(404);
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
        await del.waitForLine((l) => l.includes('configmap "fin" deleted'), 20_000, 'the deleted message');
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
  },
);
