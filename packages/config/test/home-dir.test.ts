// The home folder lookup follows client-go's util/homedir.HomeDir, on POSIX and on Windows rules.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { userHomeDir } from '../src/home-dir.js';

const made: string[] = [];
function dir(withKubeconfig = false): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-home-'));
  made.push(d);
  if (withKubeconfig) {
    fs.mkdirSync(path.join(d, '.kube'));
    fs.writeFileSync(path.join(d, '.kube', 'config'), 'apiVersion: v1\nkind: Config\n');
  }
  return d;
}
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('userHomeDir', () => {
  it('uses HOME on POSIX when it exists, and nothing when it does not', () => {
    const home = dir();
    expect(userHomeDir({ HOME: home }, 'linux')).toBe(home);
    expect(userHomeDir({ HOME: path.join(home, 'gone') }, 'linux')).toBeUndefined();
    expect(userHomeDir({}, 'darwin')).toBeUndefined();
  });

  it('on Windows prefers the folder that holds .kube/config, then a writable one', () => {
    const home = dir();
    const profile = dir(true);
    expect(userHomeDir({ HOME: home, USERPROFILE: profile }, 'win32')).toBe(profile);
    const plain = dir();
    expect(userHomeDir({ USERPROFILE: plain, HOMEDRIVE: '', HOMEPATH: '' }, 'win32')).toBe(plain);
    expect(userHomeDir({ HOME: path.join(plain, 'gone') }, 'win32')).toBeUndefined();
  });
});
