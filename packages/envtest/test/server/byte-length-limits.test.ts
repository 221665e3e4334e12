/**
 * Kube-apiserver's length limits on free text count UTF-8 bytes (Go `len` of a string), not JS
 * characters: the annotations' total size (apimachinery ValidateAnnotationsSize, 256 KiB) and an
 * events.k8s.io/v1 Event note (pkg/apis/core/validation/events.go NoteLengthLimit, 1024). envtest counted
 * characters, so non-ASCII text the real server refuses was accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventV1, startTestServer, type TestServer } from './helpers.js';

describe('length limits count UTF-8 bytes, as kube-apiserver does', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('annotations: 100k "é" (200k bytes) pass, 140k "é" (280k bytes, 140k characters) are refused with 422', async () => {
    const cm = (name: string, value: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, annotations: { 'example.com/a': value } },
    });
    const path = '/api/v1/namespaces/default/configmaps';
    expect((await t.req('POST', path, cm('ann-ok', 'é'.repeat(100_000)))).status).toBe(201);
    expect((await t.req('POST', path, cm('ann-big', 'é'.repeat(140_000)))).status).toBe(422);
  });

  it('an Event note of 600 "é" (1200 bytes) is refused with 422; 512 (1024 bytes) pass', async () => {
    const ev = (name: string, note: string) => eventV1(name, { note });
    const path = '/apis/events.k8s.io/v1/namespaces/default/events';
    expect((await t.req('POST', path, ev('note-ok', 'é'.repeat(512)))).status).toBe(201);
    expect((await t.req('POST', path, ev('note-big', 'é'.repeat(600)))).status).toBe(422);
  });
});
