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
import { retryOnError } from '@kubeloop/client/apiutil';
import { asStatusError, isTooManyRequests } from '@kubeloop/client/errors';
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
      await createAll(count, (j) =>
        ctx.client.create(ConfigMap, {
          metadata: { namespace: ctx.namespace, name: name(j) },
          data: { v: '0' },
        }),
      );
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

/** Creates in flight at once while populating: a real server on a loaded box answers each create in 50-500 ms. */
const POPULATE_IN_FLIGHT = 48;
/** 8 attempts, 0.2 s apart doubling: a create survives ~50 s of a server that sheds load or restarts. */
const POPULATE_RETRY = { steps: 8, durationMs: 200, factor: 2, jitter: 0.2 } as const;

/**
 * Runs `create(0) … create(count - 1)` with at most {@link POPULATE_IN_FLIGHT} in flight (a fixed pool of
 * workers taking the next index, so one slow create never holds a whole batch back). A create that fails with
 * a 429, a 5xx or no HTTP answer at all (a timeout, a reset) is tried again (client-go `retry.OnError` with
 * a backoff), and AlreadyExists then counts as done: the attempt that timed out may have been taken. Any other
 * error ends the populate.
 */
async function createAll(count: number, create: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const transient = (err: unknown) => {
    const se = asStatusError(err);
    return !se || isTooManyRequests(err) || se.httpStatus >= 500;
  };
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      let attempt = 0;
      await retryOnError(POPULATE_RETRY, transient, async () => {
        try {
          await create(i);
        } catch (err) {
          if (attempt > 0 && isAlreadyExists(err)) return;
          throw err;
        } finally {
          attempt++;
        }
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(POPULATE_IN_FLIGHT, count) }, worker));
}
