import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadRestConfigOptions } from './options.js';

/**
 * The user's home folder as client-go's `util/homedir.HomeDir` finds it. Elsewhere than Windows: `HOME`
 * when it exists. On Windows, of `HOME`, `HOMEDRIVE`+`HOMEPATH` and `USERPROFILE`: the first that holds
 * `.kube\config`, else (in the order `HOME`, `USERPROFILE`, `HOMEDRIVE`+`HOMEPATH`) the first that is
 * writable, else the first that exists. Undefined when none qualifies.
 *
 * Written here rather than taken from `@kubernetes/client-node`: importing its `findHomeDir` loads the whole
 * library (about 1.3 s and 40 MB at start-up) for a few `stat` calls.
 */
export function userHomeDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  const exists = (p: string, mode = fs.constants.F_OK): boolean => {
    try {
      fs.accessSync(p, mode);
      return true;
    } catch {
      return false;
    }
  };
  if (platform !== 'win32') return env.HOME && exists(env.HOME) ? env.HOME : undefined;
  const home = env.HOME ?? '';
  const drivePath = env.HOMEDRIVE && env.HOMEPATH ? path.join(env.HOMEDRIVE, env.HOMEPATH) : '';
  const profile = env.USERPROFILE ?? '';
  const byConfig = [...new Set([home, drivePath, profile])].filter(Boolean);
  const byProfile = [...new Set([home, profile, drivePath])].filter(Boolean);
  return (
    byConfig.find((d) => exists(path.join(d, '.kube', 'config'))) ??
    byProfile.find((d) => exists(d, fs.constants.W_OK)) ??
    byProfile.find((d) => exists(d))
  );
}

/**
 * The folder `~/.kube/config` is looked up in: `options.homeDir`; else, when the caller passed its own
 * `env`, that env's `HOME` (or `os.homedir()`); else {@link userHomeDir} of the process, else `os.homedir()`.
 */
export function homeDirOf(options: LoadRestConfigOptions): string | undefined {
  if (options.homeDir) return options.homeDir;
  if (options.env) return options.env.HOME || os.homedir();
  return userHomeDir(process.env, process.platform) ?? os.homedir();
}
