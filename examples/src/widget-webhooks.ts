/**
 * Webhooks for a two-version kind (`@kubeloop/webhook` + `@kubeloop/crd`): `Widget` is served as `v1` (the hub,
 * stored) and `v1alpha1` (a spoke, `spec.colour` where v1 has `spec.color`). One exported declaration,
 * `widgetWebhooks`, holds a defaulter (a missing `spec.color` becomes `blue`), a validator (a `spec.size` above
 * 10 is denied with a field cause; a red widget is admitted with a warning) and the hub-and-spoke conversion:
 * the manager serves it (`newWebhookManagedBy(mgr).from(widgetWebhooks)`) and `kubeloop webhook generate`
 * writes the webhook configurations and the CRD's conversion stanza from the same value.
 * Run: `node --experimental-strip-types examples/src/widget-webhooks.ts` with the serving certificate in
 * /tmp/k8s-webhook-server/serving-certs, against a cluster that has the CRD and the configurations.
 */
import { getConfig, type Manager, newManager, setupSignalHandler } from '@kubeloop/builder';
import type { ObjectOf } from '@kubeloop/client';
import { defineKind } from '@kubeloop/crd';
import { AdmissionDeniedError, defineWebhook, newWebhookManagedBy } from '@kubeloop/webhook';
import { Type } from 'typebox';

/** examples.kubeloop.dev/v1 Widget: the hub and storage version. */
export const Widget = defineKind({
  group: 'examples.kubeloop.dev',
  version: 'v1',
  kind: 'Widget',
  spec: Type.Object({
    size: Type.Integer({ minimum: 1 }),
    color: Type.Optional(Type.String()),
  }),
});

/** examples.kubeloop.dev/v1alpha1 Widget: the older spelling, converted through the webhook. */
export const WidgetV1alpha1 = defineKind({
  group: 'examples.kubeloop.dev',
  version: 'v1alpha1',
  kind: 'Widget',
  spec: Type.Object({ size: Type.Integer({ minimum: 1 }), colour: Type.Optional(Type.String()) }),
  storage: false,
});

export type WidgetObject = ObjectOf<typeof Widget>;
export type WidgetV1alpha1Object = ObjectOf<typeof WidgetV1alpha1>;

/** The largest size the validator admits. */
export const MAX_SIZE = 10;

/** v1alpha1 ⇄ v1 (the hub): `colour` is `color`; the rest of the spec is the same. */
export const v1alpha1Spoke = {
  toHub: (s: WidgetV1alpha1Object): WidgetObject => {
    const { colour, ...rest } = s.spec;
    return { ...s, spec: { ...rest, ...(colour === undefined ? {} : { color: colour }) } };
  },
  fromHub: (h: WidgetObject): WidgetV1alpha1Object => {
    const { color, ...rest } = h.spec;
    return { ...h, spec: { ...rest, ...(color === undefined ? {} : { colour: color }) } };
  },
};

/** Validates and defaults v1 Widgets and converts v1alpha1 ⇄ v1 (read by `kubeloop webhook generate`). */
export const widgetWebhooks = defineWebhook({
  for: Widget,
  defaulter: {
    default(w) {
      w.spec.color ??= 'blue';
    },
  },
  validator: {
    validateCreate: (w) => check(w),
    validateUpdate: (_old, w) => check(w),
  },
  conversion: { hub: Widget, spokes: { v1alpha1: v1alpha1Spoke } },
  settings: { timeoutSeconds: 5 },
});

function check(w: WidgetObject): string[] {
  if (w.spec.size > MAX_SIZE)
    throw AdmissionDeniedError.invalid(Widget, w.metadata?.name, [
      { field: 'spec.size', message: `Invalid value: ${w.spec.size}: must be at most ${MAX_SIZE}` },
    ]);
  return w.spec.color === 'red' ? ['spec.color: red widgets fade in the sun'] : [];
}

/** Serves the Widget webhooks on the manager's webhook server. */
export function addWidgetWebhooks(mgr: Manager): void {
  newWebhookManagedBy(mgr).from(widgetWebhooks).complete();
}

async function main(): Promise<void> {
  const mgr = newManager(getConfig());
  addWidgetWebhooks(mgr);
  await mgr.start(setupSignalHandler());
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
