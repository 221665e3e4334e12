import type { DeepReadonly, KubeObject } from '@kubeloop/client';
import { describe, expect, it } from 'vitest';
import {
  and,
  annotationChangedPredicate,
  generationChangedPredicate,
  type Logger,
  labelChangedPredicate,
  labelSelectorPredicate,
  newPredicateFuncs,
  not,
  or,
  type Predicate,
  resourceVersionChangedPredicate,
} from '../src/index.js';

function obj(meta: Record<string, unknown>, kind = 'App'): KubeObject {
  return { apiVersion: 'example.com/v1', kind, metadata: { name: 'x', namespace: 'ns', ...meta } };
}

function warnings(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log: Logger = {
    debug: () => {},
    info: () => {},
    warn: (_f, m) => lines.push(m),
    error: () => {},
    child: () => log,
  };
  return { log, lines };
}

describe('predicates (controller-runtime pkg/predicate)', () => {
  it('generationChanged passes spec edits only; create/delete/generic pass', () => {
    const p = generationChangedPredicate();
    expect(p.update?.(obj({ generation: 1 }), obj({ generation: 1, labels: { a: 'b' } }))).toBe(false);
    expect(p.update?.(obj({ generation: 1 }), obj({ generation: 2 }))).toBe(true);
    expect(p.create).toBeUndefined();
    expect(p.delete).toBeUndefined();
  });

  it('C25: generationChanged lets objects without metadata.generation through by default and warns once per kind; drop mode filters them', () => {
    const { log, lines } = warnings();
    const p = generationChangedPredicate({ logger: log });
    const cm = (rv: string) => obj({ resourceVersion: rv }, 'ConfigMap');
    for (let i = 0; i < 5; i++) expect(p.update?.(cm(`${i}`), cm(`${i + 1}`))).toBe(true);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/no metadata.generation/);
    const drop = generationChangedPredicate({ withoutGeneration: 'drop' });
    expect(drop.update?.(cm('1'), cm('2'))).toBe(false);
  });

  it('resourceVersionChanged drops resyncs', () => {
    const p = resourceVersionChangedPredicate();
    const a = obj({ resourceVersion: '5' });
    expect(p.update?.(a, a)).toBe(false);
    expect(p.update?.(a, obj({ resourceVersion: '6' }))).toBe(true);
  });

  it('labelChanged and annotationChanged compare the maps, not their order or identity', () => {
    const l = labelChangedPredicate();
    expect(l.update?.(obj({ labels: { a: '1', b: '2' } }), obj({ labels: { b: '2', a: '1' } }))).toBe(false);
    expect(l.update?.(obj({ labels: { a: '1' } }), obj({ labels: { a: '2' } }))).toBe(true);
    expect(l.update?.(obj({}), obj({ labels: {} }))).toBe(false);
    expect(l.update?.(obj({ labels: { a: '1' } }), obj({}))).toBe(true);
    const an = annotationChangedPredicate();
    expect(an.update?.(obj({ annotations: { x: '1' } }), obj({ annotations: { x: '1' } }))).toBe(false);
    expect(an.update?.(obj({ annotations: { x: '1' } }), obj({ annotations: { x: '2' } }))).toBe(true);
  });

  it('labelSelectorPredicate matches every event kind against the (new) object; a bad selector throws at once', () => {
    const p = labelSelectorPredicate({ matchLabels: { team: 'a' } });
    expect(p.create?.(obj({ labels: { team: 'a' } }))).toBe(true);
    expect(p.create?.(obj({ labels: { team: 'b' } }))).toBe(false);
    expect(p.update?.(obj({ labels: { team: 'b' } }), obj({ labels: { team: 'a' } }))).toBe(true);
    expect(p.delete?.(obj({}), false)).toBe(false);
    expect(labelSelectorPredicate('tier in (web,api)').generic?.(obj({ labels: { tier: 'api' } }))).toBe(
      true,
    );
    expect(() => labelSelectorPredicate('a in (')).toThrow();
  });

  it('and / or / not / newPredicateFuncs combine per event kind; a missing method counts as passing', () => {
    const yes: Predicate = newPredicateFuncs(() => true);
    const no: Predicate = newPredicateFuncs(() => false);
    const onlyUpdateNo: Predicate = { update: () => false };
    const o = obj({});
    expect(and(yes, yes).create?.(o)).toBe(true);
    expect(and(yes, no).create?.(o)).toBe(false);
    expect(and(onlyUpdateNo).create?.(o)).toBe(true);
    expect(and(onlyUpdateNo).update?.(o, o)).toBe(false);
    expect(or(no, yes).delete?.(o, true)).toBe(true);
    expect(or(no, no).generic?.(o)).toBe(false);
    expect(or().create?.(o)).toBe(false);
    expect(not(no).create?.(o)).toBe(true);
    expect(not(onlyUpdateNo).create?.(o)).toBe(false);
    expect(not(onlyUpdateNo).update?.(o, o)).toBe(true);
    const seen: DeepReadonly<KubeObject>[] = [];
    const f = newPredicateFuncs((x) => {
      seen.push(x);
      return true;
    });
    const newer = obj({ name: 'new' });
    f.update?.(o, newer);
    expect(seen).toEqual([newer]);
  });
});
