/** Value of `--name=value`, `--name value`, `-name=value` or `-name value` in argv (Go flag syntax). */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    for (const prefix of [`--${name}`, `-${name}`]) {
      if (arg === prefix) return argv[i + 1];
      if (arg.startsWith(`${prefix}=`)) return arg.slice(prefix.length + 1);
    }
  }
  return undefined;
}
