/**
 * Base64 of Go `[]byte` fields (OpenAPI `format: byte`): kube-apiserver decodes request bodies with encoding/json,
 * which reads a `[]byte` as a standard-alphabet, padded base64 string (encoding/base64 `StdEncoding`, where `\r`
 * and `\n` are skipped) and fails the whole decode with `illegal base64 data at input byte N` (a
 * `base64.CorruptInputError`: the byte offset in the string where decoding stopped).
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DECODE = new Uint8Array(256).fill(0xff);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;
const PAD = 0x3d; // '='
const isNewline = (c: number | undefined) => c === 0x0a || c === 0x0d;

/**
 * The offset Go's `base64.StdEncoding.DecodeString` reports for `s` (a byte offset into its UTF-8 form), or
 * undefined when it decodes. Follows encoding/base64 `decodeQuantum` quantum by quantum: a character outside the
 * alphabet, padding in the first two places of a quantum, missing padding, a short final quantum, or anything
 * after the padding.
 */
export function goBase64Error(s: string): number | undefined {
  const src = Buffer.from(s, 'utf8');
  let si = 0;
  while (si < src.length) {
    let j = 0;
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return undefined;
        return si - j;
      }
      const c = src[si++]!;
      if (DECODE[c] !== 0xff) continue;
      if (isNewline(c)) {
        j--;
        continue;
      }
      if (c !== PAD) return si - 1;
      if (j < 2) return si - 1;
      if (j === 2) {
        // "==" is expected: the second "=" may follow newlines
        while (si < src.length && isNewline(src[si])) si++;
        if (si === src.length) return src.length;
        if (src[si] !== PAD) return si - 1;
        si++;
      }
      while (si < src.length && isNewline(src[si])) si++;
      return si < src.length ? si : undefined;
    }
  }
  return undefined;
}
