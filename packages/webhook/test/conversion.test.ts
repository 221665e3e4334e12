import { type KubeObject, kind } from '@kubeloop/client';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConversionWebhook, convertHubAndSpoke, type HubAndSpoke, type Spoke } from '../src/index.js';

// The example's versions: v1alpha1 has a flat `spec.size` + `spec.colour`; v1 (the hub) nests them.
interface WidgetV1 extends KubeObject {
  spec: { dimensions: { size: number }; color: string };
}
interface WidgetV1alpha1 extends KubeObject {
  spec: { size: number; colour: string };
}
const WidgetV1 = kind<WidgetV1>('example.com/v1', 'Widget');
const v1alpha1: Spoke<WidgetV1alpha1, WidgetV1> = {
  toHub: (s) => ({ ...s, spec: { dimensions: { size: s.spec.size }, color: s.spec.colour } }),
  fromHub: (h) => ({ ...h, spec: { size: h.spec.dimensions.size, colour: h.spec.color } }),
};
const widgetVersions: HubAndSpoke<WidgetV1> = { hub: WidgetV1, spokes: { v1alpha1 } };

const meta = { name: 'w1', namespace: 'default', uid: 'u1', labels: { a: 'b' } };

describe('conversion', () => {
  it('hub and spoke: both directions, and same version returns the object', () => {
    const old: WidgetV1alpha1 = {
      apiVersion: 'example.com/v1alpha1',
      kind: 'Widget',
      metadata: meta,
      spec: { size: 3, colour: 'red' },
    };
    const hub = convertHubAndSpoke(widgetVersions, old, 'example.com/v1') as WidgetV1;
    expect(hub).toEqual({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: meta,
      spec: { dimensions: { size: 3 }, color: 'red' },
    });
    expect(convertHubAndSpoke(widgetVersions, hub, 'example.com/v1alpha1')).toEqual(old);
    expect(convertHubAndSpoke(widgetVersions, hub, 'example.com/v1')).toBe(hub);
  });

  it('an unknown version fails the review with a clear message', () => {
    const wh = new ConversionWebhook();
    wh.register(WidgetV1, widgetVersions);
    const r = wh.convert({
      uid: 'c1',
      desiredAPIVersion: 'example.com/v2',
      objects: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: meta }],
    });
    expect(r).toEqual({
      uid: 'c1',
      convertedObjects: [],
      result: {
        status: 'Failure',
        message:
          'conversion to version "v2" of Widget.example.com is not supported: known versions v1, v1alpha1',
      },
    });
    const other = wh.convert({
      uid: 'c2',
      desiredAPIVersion: 'example.com/v1',
      objects: [{ apiVersion: 'x.io/v1', kind: 'Gadget', metadata: meta }],
    });
    expect(other.result.message).toBe('no conversion is registered for kind "Gadget" in group "x.io"');
    expect(() => wh.register(WidgetV1, widgetVersions)).toThrow(/registered already/);
  });

  it('the function form; a conversion that changes the identity or throws fails the review', () => {
    const wh = new ConversionWebhook();
    wh.register(kind('a.io/v1', 'A'), (o, v) => ({
      ...o,
      apiVersion: v,
      metadata: { ...o.metadata, labels: { x: '1' } },
    }));
    wh.register(kind('b.io/v1', 'B'), (o) => ({ ...o, metadata: { ...o.metadata, name: 'renamed' } }));
    wh.register(kind('c.io/v1', 'C'), () => {
      throw new Error('cannot convert C');
    });
    const ok = wh.convert({
      uid: 'u',
      desiredAPIVersion: 'a.io/v2',
      objects: [{ apiVersion: 'a.io/v1', kind: 'A', metadata: meta }],
    });
    expect(ok.result.status).toBe('Success');
    expect(ok.convertedObjects[0]).toEqual({
      apiVersion: 'a.io/v2',
      kind: 'A',
      metadata: { ...meta, labels: { x: '1' } },
    });
    const renamed = wh.convert({
      uid: 'u',
      desiredAPIVersion: 'b.io/v2',
      objects: [{ apiVersion: 'b.io/v1', kind: 'B', metadata: meta }],
    });
    expect(renamed.result.message).toMatch(/changed metadata.name/);
    const thrown = wh.convert({
      uid: 'u',
      desiredAPIVersion: 'c.io/v2',
      objects: [{ apiVersion: 'c.io/v1', kind: 'C', metadata: meta }],
    });
    expect(thrown.result).toEqual({ status: 'Failure', message: 'cannot convert C' });
  });

  it.each([
    ['', /request body is empty/],
    ['nope', /couldn't parse the ConversionReview/],
    [
      JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v2', kind: 'ConversionReview', request: {} }),
      /unsupported ConversionReview apiVersion/,
    ],
    [
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'x' },
      }),
      /desiredAPIVersion/,
    ],
    [
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'x', desiredAPIVersion: 'a/v1', objects: [1] },
      }),
      /request.objects/,
    ],
  ])('malformed review %# answers 400', (body, message) => {
    const reply = new ConversionWebhook().serve(body);
    expect(reply.status).toBe(400);
    expect((reply.body as { message: string }).message).toMatch(message);
  });

  it('property: v1alpha1 -> v1 -> v1alpha1 and v1 -> v1alpha1 -> v1 are identities', () => {
    const wh = new ConversionWebhook();
    wh.register(WidgetV1, widgetVersions);
    const convert = (o: KubeObject, to: string): KubeObject => {
      const r = wh.convert({ uid: 'p', desiredAPIVersion: to, objects: [o] });
      expect(r.result.status).toBe('Success');
      return r.convertedObjects[0] as KubeObject;
    };
    const metadata = fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
      namespace: fc.constantFrom('default', 'ns1'),
      uid: fc.uuid(),
      labels: fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
    });
    fc.assert(
      fc.property(metadata, fc.integer(), fc.string(), (m, size, colour) => {
        const old: WidgetV1alpha1 = {
          apiVersion: 'example.com/v1alpha1',
          kind: 'Widget',
          metadata: m,
          spec: { size, colour },
        };
        expect(convert(convert(old, 'example.com/v1'), 'example.com/v1alpha1')).toEqual(old);
        const hub: WidgetV1 = {
          apiVersion: 'example.com/v1',
          kind: 'Widget',
          metadata: m,
          spec: { dimensions: { size }, color: colour },
        };
        expect(convert(convert(hub, 'example.com/v1alpha1'), 'example.com/v1')).toEqual(hub);
      }),
      { numRuns: 200 },
    );
  });
});
