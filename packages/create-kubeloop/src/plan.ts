/**
 * What a generator command changes in a project, planned in memory and written only when every change is safe —
 * kubebuilder's scaffolding semantics: whole files from templates, lines inserted at `kubeloop:scaffold:*` marker
 * comments (so a file the user edits keeps growing), and keys merged into package.json. A file that exists and
 * differs from its template is the user's: it is never overwritten without `force`, and then nothing is written.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Why a plan cannot be written: files the user changed, or a marker that is gone. Nothing was written. */
export class ConflictError extends Error {
  /** `'ConflictError'`. */
  override readonly name = 'ConflictError';
  /** One line per file in the way, relative to the project. */
  readonly conflicts: readonly string[];
  constructor(conflicts: readonly string[]) {
    super(
      conflicts.length === 1
        ? `${conflicts[0]}`
        : `${conflicts.length} files are in the way: ${conflicts.join('; ')}`,
    );
    this.conflicts = conflicts;
  }
}

/** What happened to one file. */
export type FileAction = 'created' | 'updated' | 'overwritten' | 'unchanged';

/** One line of a plan's outcome. */
export interface FileResult {
  /** Path relative to the project root, with `/` separators. */
  readonly path: string;
  /** Whether it was created, updated (lines added), overwritten (`--force`) or left unchanged. */
  readonly action: FileAction;
}

interface Pending {
  content: string;
  executable: boolean;
  overwrite: boolean;
}

/**
 * A set of changes to the project at `root`, staged in memory. `file`, `insertAtMarker` and `mergeJson` stage;
 * `commit` checks and writes. Reads see staged contents, so a later step can edit a file an earlier one created.
 */
export class Plan {
  readonly #root: string;
  readonly #force: boolean;
  readonly #pending = new Map<string, Pending>();
  readonly #conflicts: string[] = [];

  /** @param root the project folder. @param force overwrite files that differ from their templates. */
  constructor(root: string, force = false) {
    this.#root = root;
    this.#force = force;
  }

  /** The project folder. */
  get root(): string {
    return this.#root;
  }

  /** The current (staged, else on-disk) text of `rel`, or undefined when it does not exist. */
  read(rel: string): string | undefined {
    const staged = this.#pending.get(rel);
    if (staged) return staged.content;
    const full = path.join(this.#root, rel);
    return existsSync(full) ? readFileSync(full, 'utf8') : undefined;
  }

  /** Whether `rel` exists (staged or on disk). */
  exists(rel: string): boolean {
    return this.read(rel) !== undefined;
  }

  /**
   * Stages the whole file `rel` from a template. Identical on disk: left alone. Equal to one of `replaces` (what an
   * earlier run wrote): updated. Otherwise different on disk: a conflict, unless `force`.
   */
  file(
    rel: string,
    content: string,
    options: { executable?: boolean; replaces?: readonly string[] } = {},
  ): void {
    const current = this.read(rel);
    // an earlier template's output (another run of the same command) is not the user's: it is updated
    const earlier = current !== undefined && (options.replaces ?? []).includes(current);
    if (current !== undefined && current !== content && !earlier && !this.#pending.has(rel) && !this.#force) {
      this.#conflicts.push(
        `${rel} exists and differs from the template (edited?): pass --force to overwrite it`,
      );
      return;
    }
    this.#pending.set(rel, {
      content,
      executable: options.executable ?? false,
      overwrite: current !== undefined && current !== content && !earlier,
    });
  }

  /** Records why the plan cannot be written (one line naming the file): nothing is written. */
  conflict(message: string): void {
    this.#conflicts.push(message);
  }

  /**
   * Inserts `line` just above the line holding `marker` in `rel`, with that line's indentation, unless the file
   * already has the line (so running a command twice changes nothing). A missing file or marker is a conflict.
   */
  insertAtMarker(rel: string, marker: string, line: string): void {
    const text = this.read(rel);
    if (text === undefined) {
      this.#conflicts.push(`${rel} is missing: run \`kubeloop init\` first (or restore it)`);
      return;
    }
    const lines = text.split('\n');
    if (lines.some((l) => l.trim() === line.trim())) return;
    const at = lines.findIndex((l) => l.includes(marker));
    if (at < 0) {
      this.#conflicts.push(`${rel} has no "${marker}" marker: add the line ${JSON.stringify(line)} yourself`);
      return;
    }
    const indent = /^\s*/.exec(lines[at] ?? '')?.[0] ?? '';
    lines.splice(at, 0, `${indent}${line.trimStart()}`);
    this.#stage(rel, lines.join('\n'));
  }

  /**
   * Sets the keys of `values` at `section` (e.g. `scripts`) of the JSON file `rel`. A key that exists with another
   * value is the user's: a conflict unless `force`.
   */
  mergeJson(rel: string, section: string, values: Readonly<Record<string, string>>): void {
    const text = this.read(rel);
    if (text === undefined) {
      this.#conflicts.push(`${rel} is missing: run \`kubeloop init\` first (or restore it)`);
      return;
    }
    const json = JSON.parse(text) as Record<string, Record<string, string> | undefined>;
    const target = { ...(json[section] ?? {}) };
    let changed = false;
    for (const [k, v] of Object.entries(values)) {
      if (target[k] === v) continue;
      if (target[k] !== undefined && !this.#force) {
        this.#conflicts.push(
          `${rel}: ${section}.${k} is ${JSON.stringify(target[k])}, not ${JSON.stringify(v)} (edited?): pass --force to overwrite it`,
        );
        continue;
      }
      target[k] = v;
      changed = true;
    }
    if (!changed) return;
    json[section] = target;
    this.#stage(rel, `${JSON.stringify(json, null, 2)}\n`);
  }

  #stage(rel: string, content: string): void {
    const before = this.#pending.get(rel);
    this.#pending.set(rel, {
      content,
      executable: before?.executable ?? false,
      overwrite: before?.overwrite ?? false,
    });
  }

  /**
   * Writes every staged change, or nothing: @throws ConflictError listing every file in the way when any is.
   * Returns what happened to each staged file, in staging order.
   */
  commit(): FileResult[] {
    if (this.#conflicts.length > 0) throw new ConflictError(this.#conflicts);
    const results: FileResult[] = [];
    for (const [rel, p] of this.#pending) {
      const full = path.join(this.#root, rel);
      const onDisk = existsSync(full) ? readFileSync(full, 'utf8') : undefined;
      const action: FileAction =
        onDisk === undefined
          ? 'created'
          : onDisk === p.content
            ? 'unchanged'
            : p.overwrite
              ? 'overwritten'
              : 'updated';
      if (action !== 'unchanged') {
        mkdirSync(path.dirname(full), { recursive: true });
        writeFileSync(full, p.content);
        if (p.executable) chmodSync(full, 0o755);
      }
      results.push({ path: rel.split(path.sep).join('/'), action });
    }
    return results;
  }
}
