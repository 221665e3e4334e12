#!/usr/bin/env node
/**
 * `kubeloop`: `crd generate <module…>`, `crd types <crd.yaml…>`, `rbac generate <module…>`, `webhook generate <module…>`
 * (see the package README); `init` and `create api|webhook` are handed to the `create-kubeloop` generator when the
 * project has it.
 * Exit codes: 0 done; 1 generation failed; 2 a bad command line or argument. Errors are one line on stderr.
 */
import { createRequire } from 'node:module';
import { runCli } from './cli-main.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

process.exitCode = await runCli(
  process.argv.slice(2),
  {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    cwd: process.cwd(),
  },
  version,
);
