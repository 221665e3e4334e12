// Runs ONE task of one bench file in this (fresh) process and prints its result as one JSON line.
// Spawned by run.mjs so the JIT, inline caches and heap of one implementation never affect another.
import { pathToFileURL } from 'node:url';
import { runTask } from './runner.mjs';

const [file, suite, index, timeMs, warmupMs, clock] = process.argv.slice(2);
const mod = await import(pathToFileURL(file).href);
const tasks = await mod.tasks(process.env.BENCH_VARIANT);
const task = tasks[Number(index)];
if (!task) throw new Error(`no task #${index} in ${file}`);
const result = await runTask(suite, task, {
  timeMs: Number(timeMs),
  warmupMs: Number(warmupMs),
  clock: clock === 'wall' ? 'wall' : 'cpu',
});
// Exit once the line is out: a macro task's sockets or timers must not keep a finished run alive.
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
