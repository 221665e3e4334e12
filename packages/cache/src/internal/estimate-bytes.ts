import type { KubeObject } from '@kubeloop/client';

/** Objects sampled to estimate the bytes a plain store holds. */
const BYTES_SAMPLE = 64;

/**
 * The JSON bytes of the objects under `keys`, estimated from the UTF-16 length of up to {@link BYTES_SAMPLE}
 * evenly spaced objects' JSON (ASCII-heavy Kubernetes objects: about one byte a character), scaled to all.
 */
export function estimateBytes(keys: readonly string[], get: (key: string) => KubeObject | undefined): number {
  if (keys.length === 0) return 0;
  const step = Math.max(1, Math.floor(keys.length / BYTES_SAMPLE));
  let sampled = 0;
  let chars = 0;
  for (let i = 0; i < keys.length && sampled < BYTES_SAMPLE; i += step) {
    chars += JSON.stringify(get(keys[i]!))?.length ?? 0;
    sampled++;
  }
  return Math.round((chars / sampled) * keys.length);
}
