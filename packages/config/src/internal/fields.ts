/**
 * Typed readers of raw kubeconfig fields. Each takes the file and the field path so that a wrong value is
 * reported as `<file>: <entry>.<field>: <what is wrong>` (a {@link KubeconfigError}).
 */
import fs from 'node:fs';
import path from 'node:path';
import { KubeconfigError } from '../errors.js';
import type { Env } from '../options.js';

/** A string field; `undefined` for absent, null or empty. */
export function str(v: unknown, file: string, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new KubeconfigError('InvalidEntry', 'must be a string', { file, field });
  return v;
}

/** A boolean field; absent or null is `false`. */
export function bool(v: unknown, file: string, field: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean')
    throw new KubeconfigError('InvalidEntry', 'must be true or false', { file, field });
  return v;
}

/** A base64 field (`*-data`), decoded as UTF-8 text. */
export function base64Text(v: unknown, file: string, field: string): string | undefined {
  const s = str(v, file, field);
  if (s === undefined) return undefined;
  if (!/^[A-Za-z0-9+/=\s_-]*$/.test(s))
    throw new KubeconfigError('InvalidEntry', 'not valid base64', { file, field });
  return Buffer.from(s, 'base64').toString('utf8');
}

/** The text of a file a kubeconfig field points at. */
export function readReferenced(p: string, file: string, field: string): string {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new KubeconfigError(
      code === 'ENOENT' ? 'FileNotFound' : 'FileUnreadable',
      `cannot read ${p} (${code})`,
      { file, field },
    );
  }
}

/**
 * The absolute path of the first executable `command` in `env.PATH` (with `PATHEXT` on Windows), as Go's
 * `exec.LookPath` finds it; `undefined` when there is none.
 */
export function lookPath(command: string, env: Env): string | undefined {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const exts =
    process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').concat(['']) : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = path.resolve(dir, command + ext);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {
        // keep looking
      }
    }
  }
  return undefined;
}
