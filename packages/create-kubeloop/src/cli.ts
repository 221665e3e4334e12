#!/usr/bin/env node
/**
 * `create-kubeloop` (`npm create kubeloop@latest my-operator`): scaffolds a kubeloop operator. See
 * {@link runCreateKubeloop} for the commands and exit codes.
 */
import { runCreateKubeloop } from './cli-main.js';

process.exitCode = await runCreateKubeloop(process.argv.slice(2), {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  cwd: process.cwd(),
});
