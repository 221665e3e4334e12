/** The `users[…].exec` entry of a kubeconfig (client-go `clientcmdapi.ExecConfig`), checked at load time. */
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { KubeconfigError } from '../errors.js';
import type { Env } from '../options.js';
import type { ExecConfig } from '../rest-config.js';
import { bool, lookPath, str } from './fields.js';

const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

/**
 * An exec entry as an {@link ExecConfig}. The command must exist now: an absolute path must be executable,
 * a bare name must be on `env.PATH` (its absolute path becomes `resolvedCommand`, the binary that will run).
 * @throws {KubeconfigError} `InvalidEntry` naming the field.
 */
export function execConfigOf(
  raw: unknown,
  file: string,
  at: string,
  env: Env,
  clusterConfig: unknown,
): ExecConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new KubeconfigError('InvalidEntry', 'not a mapping', { file, field: at });
  }
  const e = raw as Record<string, unknown>;
  const apiVersion = str(e.apiVersion, file, `${at}.apiVersion`);
  if (!apiVersion || !EXEC_API_VERSIONS.includes(apiVersion)) {
    throw new KubeconfigError(
      'InvalidEntry',
      `unsupported "${apiVersion ?? ''}", must be ${EXEC_API_VERSIONS.join(' or ')}`,
      { file, field: `${at}.apiVersion` },
    );
  }
  const command = str(e.command, file, `${at}.command`);
  if (!command) throw new KubeconfigError('InvalidEntry', 'missing', { file, field: `${at}.command` });
  const installHint = str(e.installHint, file, `${at}.installHint`);
  // client-go prints the installHint when the plugin is missing: say how to install it.
  const hint = installHint ? `; ${stripVTControlCharacters(installHint).trim()}` : '';
  let resolvedCommand: string | undefined;
  if (path.isAbsolute(command)) {
    try {
      fs.accessSync(command, fs.constants.X_OK);
    } catch {
      throw new KubeconfigError('InvalidEntry', `not found or not executable${hint}`, {
        file,
        field: `${at}.command`,
      });
    }
  } else {
    resolvedCommand = lookPath(command, env);
    if (!resolvedCommand)
      throw new KubeconfigError('InvalidEntry', `not found on PATH${hint}`, {
        file,
        field: `${at}.command`,
      });
  }
  let args: string[] | undefined;
  if (e.args !== undefined && e.args !== null) {
    if (!Array.isArray(e.args) || e.args.some((a) => typeof a !== 'string')) {
      throw new KubeconfigError('InvalidEntry', 'must be a list of strings', { file, field: `${at}.args` });
    }
    args = e.args as string[];
  }
  let envList: Array<{ name: string; value: string }> | undefined;
  if (e.env !== undefined && e.env !== null) {
    if (!Array.isArray(e.env))
      throw new KubeconfigError('InvalidEntry', 'must be a list', { file, field: `${at}.env` });
    envList = e.env.map((item, i) => {
      const it = item as Record<string, unknown> | null;
      if (!it || typeof it.name !== 'string' || typeof it.value !== 'string') {
        throw new KubeconfigError('InvalidEntry', 'needs a string name and value', {
          file,
          field: `${at}.env[${i}]`,
        });
      }
      return { name: it.name, value: it.value };
    });
  }
  let interactiveMode = e.interactiveMode as ExecConfig['interactiveMode'] | undefined;
  if (interactiveMode === undefined || (interactiveMode as unknown) === '') {
    if (apiVersion.endsWith('/v1')) {
      throw new KubeconfigError(
        'InvalidEntry',
        'must be specified for apiVersion v1 (Never, IfAvailable or Always)',
        { file, field: `${at}.interactiveMode` },
      );
    }
    interactiveMode = 'IfAvailable';
  } else if (!['Never', 'IfAvailable', 'Always'].includes(interactiveMode)) {
    throw new KubeconfigError('InvalidEntry', 'must be Never, IfAvailable or Always', {
      file,
      field: `${at}.interactiveMode`,
    });
  }
  const provideClusterInfo = bool(e.provideClusterInfo, file, `${at}.provideClusterInfo`);
  return {
    apiVersion,
    command,
    ...(resolvedCommand ? { resolvedCommand } : {}),
    ...(args ? { args } : {}),
    ...(envList ? { env: envList } : {}),
    interactiveMode,
    ...(provideClusterInfo ? { provideClusterInfo } : {}),
    ...(installHint ? { installHint } : {}),
    ...(clusterConfig !== undefined ? { clusterConfig } : {}),
  };
}
