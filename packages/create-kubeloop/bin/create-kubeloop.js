#!/usr/bin/env node
// The package's bin: committed executable, so the command works as soon as npm links it (`npm ci` in a checkout
// links it before anything is built). The CLI itself is the compiled dist/cli.js, which the build writes
// without the executable bit.
import '../dist/cli.js';
