import type { DeepReadonly, KubeObject, LabelSelectorInput } from '@kubeloop/client';
import { formatLabelSelector, matchesLabelRequirements, parseLabelSelector } from '@kubeloop/client/apiutil';
import type { Logger } from './logger.js';

/**
 * Predicate knows how to filter events before they reach a handler (controller-runtime `predicate.Funcs`).
 * A missing method lets that kind of event through. `delete` gets the object's last known state;
 * `deleteStateUnknown` is true when the delete was found by a relist (a tombstone), so the state may be stale.
 * `generic` filters events of a {@link ChannelSource}. Objects are typed `DeepReadonly<T>`: from a
 * {@link KindSource} they are the cache's frozen, shared objects.
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(obj: DeepReadonly<T>): boolean;
  update?(oldObj: DeepReadonly<T>, newObj: DeepReadonly<T>): boolean;
  delete?(obj: DeepReadonly<T>, deleteStateUnknown: boolean): boolean;
  generic?(obj: DeepReadonly<T>): boolean;
}

/**
 * A predicate applying `fn` to the object of every event — for an update, to the new object
 * (controller-runtime `predicate.NewPredicateFuncs`).
 */
export function newPredicateFuncs<T extends KubeObject = KubeObject>(
  fn: (obj: DeepReadonly<T>) => boolean,
): Predicate<T> {
  return {
    create: (obj) => fn(obj),
    update: (_old, obj) => fn(obj),
    delete: (obj) => fn(obj),
    generic: (obj) => fn(obj),
  };
}

/** Options of {@link generationChangedPredicate}. */
export interface GenerationChangedOptions {
  /**
   * What to do with updates of objects that have no `metadata.generation` (ConfigMaps, Secrets, most core
   * kinds; the API server sets it only for kinds with a spec/status split). `'pass'` (default) lets every
   * such update through, so `owns(ConfigMap)` with this predicate still sees data edits; `'drop'` filters
   * them all out, as controller-runtime's GenerationChangedPredicate does (both generations read as 0).
   * Case C25.
   */
  readonly withoutGeneration?: 'pass' | 'drop';
  /** Warned once per kind the first time an update without a generation is seen. */
  readonly logger?: Logger;
}

/**
 * Passes updates whose `metadata.generation` changed (controller-runtime `GenerationChangedPredicate`):
 * status and metadata-only edits of a kind with a status subresource do not bump the generation and are
 * filtered out. Create, delete and generic events pass. Objects without a generation: see
 * {@link GenerationChangedOptions.withoutGeneration} (default: passed, with one warning per kind).
 */
export function generationChangedPredicate<T extends KubeObject = KubeObject>(
  options: GenerationChangedOptions = {},
): Predicate<T> {
  const warned = new Set<string>();
  return {
    update: (a, b) => {
      const oldGen = a.metadata?.generation;
      const newGen = b.metadata?.generation;
      if (newGen === undefined || newGen === null) {
        const kind = `${b.apiVersion ?? ''}/${b.kind ?? ''}`;
        if (options.logger && !warned.has(kind)) {
          warned.add(kind);
          options.logger.warn(
            { kind },
            `generationChangedPredicate: objects of this kind have no metadata.generation; their updates are ${
              options.withoutGeneration === 'drop' ? 'dropped' : 'passed through'
            }`,
          );
        }
        return options.withoutGeneration !== 'drop';
      }
      return oldGen !== newGen;
    },
  };
}

/** Passes updates whose `metadata.resourceVersion` changed, so resyncs are dropped (controller-runtime `ResourceVersionChangedPredicate`). */
export function resourceVersionChangedPredicate<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (a, b) => a.metadata?.resourceVersion !== b.metadata?.resourceVersion };
}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  for (const k of ka) if (a?.[k] !== b?.[k]) return false;
  return true;
}

/** Passes updates whose labels changed (controller-runtime `LabelChangedPredicate`). */
export function labelChangedPredicate<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (a, b) => !sameMap(a.metadata?.labels, b.metadata?.labels) };
}

/** Passes updates whose annotations changed (controller-runtime `AnnotationChangedPredicate`). */
export function annotationChangedPredicate<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (a, b) => !sameMap(a.metadata?.annotations, b.metadata?.annotations) };
}

/**
 * Passes events whose object's labels match `selector` — for an update, the new object
 * (controller-runtime `LabelSelectorPredicate`). `selector` is a string (`app=web,tier!=db`) or a
 * `LabelSelector` object (`matchLabels`, `matchExpressions`).
 * @throws SelectorParseError at once when the selector is malformed.
 */
export function labelSelectorPredicate<T extends KubeObject = KubeObject>(
  selector: LabelSelectorInput,
): Predicate<T> {
  const requirements = parseLabelSelector(formatLabelSelector(selector));
  return newPredicateFuncs<T>((obj) => matchesLabelRequirements(requirements, obj.metadata?.labels ?? {}));
}

/** Passes an event when every predicate passes it (controller-runtime `predicate.And`). */
export function and<T extends KubeObject = KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return combine<T>((pass) => predicates.every(pass));
}

/** Passes an event when any predicate passes it; none given passes nothing (controller-runtime `predicate.Or`). */
export function or<T extends KubeObject = KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return combine<T>((pass) => predicates.some(pass));
}

/** A predicate whose every method asks `quantify` (every / some over the combined predicates); a missing method passes. */
function combine<T extends KubeObject>(
  quantify: (pass: (p: Predicate<T>) => boolean) => boolean,
): Predicate<T> {
  return {
    create: (o) => quantify((p) => p.create?.(o) ?? true),
    update: (a, b) => quantify((p) => p.update?.(a, b) ?? true),
    delete: (o, u) => quantify((p) => p.delete?.(o, u) ?? true),
    generic: (o) => quantify((p) => p.generic?.(o) ?? true),
  };
}

/** Passes an event when `predicate` does not (controller-runtime `predicate.Not`); a missing method counts as passing, so its negation drops. */
export function not<T extends KubeObject = KubeObject>(predicate: Predicate<T>): Predicate<T> {
  return {
    create: (o) => !(predicate.create?.(o) ?? true),
    update: (a, b) => !(predicate.update?.(a, b) ?? true),
    delete: (o, u) => !(predicate.delete?.(o, u) ?? true),
    generic: (o) => !(predicate.generic?.(o) ?? true),
  };
}
