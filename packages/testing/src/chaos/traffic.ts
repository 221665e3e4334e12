/**
 * Traffic generators: the writes a chaos run makes to the API server while faults are applied. Their client
 * is the admin's, never faulted, so the server holds the ground truth the figures are checked against.
 */
import {
  type ApiClient,
  ConfigMap,
  isAlreadyExists,
  isNotFound,
  type Kind,
  type KubeObject,
} from '@kubeloop/client';
import type { Random } from './random.js';

/** What a traffic generator gets for each call. */
export interface TrafficContext {
  /** An unfaulted client (admin token). */
  readonly client: ApiClient;
  /** The namespace the run uses. */
  readonly namespace: string;
  /** The run's seeded random source for traffic (same seed → same writes). */
  readonly random: Random;
}

/**
 * Writes objects of one kind. `populate` creates the starting set; `step` makes one random write (a create,
 * update or delete). Errors thrown by `step` are counted, not fatal (a write can meet a server restart).
 */
export interface TrafficGenerator<T extends KubeObject = KubeObject> {
  /** The kind written; the controller under test should be `for` it. */
  readonly kind: Kind<T>;
  /** Prefix of every name written (lets the schedule delay events about these objects). */
  readonly namePrefix?: string;
  populate(ctx: TrafficContext, count: number): Promise<void>;
  step(ctx: TrafficContext): Promise<void>;
}

/**
 * Random create/update/delete traffic on ConfigMaps named `<prefix><n>`: about 50% updates (a new `data.v`),
 * 25% creates, 25% deletes, over a name space of twice the starting count.
 */
export function configMapTraffic(namePrefix = 'chaos-'): TrafficGenerator {
  let space = 0;
  let counter = 0;
  const name = (i: number) => `${namePrefix}${i}`;
  return {
    kind: ConfigMap,
    namePrefix,
    async populate(ctx, count) {
      space = Math.max(2 * count, 10);
      const batch = 16;
      for (let i = 0; i < count; i += batch) {
        const writes: Promise<unknown>[] = [];
        for (let j = i; j < Math.min(count, i + batch); j++)
          writes.push(
            ctx.client.create(ConfigMap, {
              metadata: { namespace: ctx.namespace, name: name(j) },
              data: { v: '0' },
            }),
          );
        await Promise.all(writes);
      }
    },
    async step(ctx) {
      const key = { namespace: ctx.namespace, name: name(ctx.random.int(0, space - 1)) };
      const roll = ctx.random.next();
      const v = String(++counter);
      try {
        if (roll < 0.25) {
          await ctx.client.create(ConfigMap, { metadata: key, data: { v } });
        } else if (roll < 0.5) {
          await ctx.client.delete(ConfigMap, key);
        } else {
          await ctx.client.patch(ConfigMap, key, { type: 'merge', data: { data: { v } } });
        }
      } catch (err) {
        // Creating what exists or touching what is gone is normal random traffic, not an error.
        if (!isAlreadyExists(err) && !isNotFound(err)) throw err;
      }
    },
  };
}
