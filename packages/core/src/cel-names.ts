/**
 * How kube-apiserver names a schema property in CEL (apiserver `pkg/cel` `Escape`), and the shapes the CEL modules
 * share (a schema node, cel-js's parse tree); re-exported by `cel.ts`.
 */

/**
 * The words the CEL grammar reserves (cel-spec `langdef.md`): a property named one of them is reached in a rule
 * as `__{word}__` (`self.__namespace__`).
 */
export const CEL_RESERVED_WORDS: ReadonlySet<string> = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

const ESCAPES: Readonly<Record<string, string>> = {
  __: '__underscores__',
  '.': '__dot__',
  '-': '__dash__',
  '/': '__slash__',
};

/**
 * The CEL identifier a CRD rule uses for the property `name`, as kube-apiserver escapes it: a reserved word
 * becomes `__{word}__`; otherwise, left to right, `__` becomes `__underscores__`, `.` `__dot__`, `-` `__dash__` and
 * `/` `__slash__`. `undefined` when the name cannot be escaped (empty, starting with a digit, or holding a
 * character outside `[a-zA-Z0-9_.-/]`): the server leaves such a property out of the rule's type, so no rule
 * can name it.
 *
 * @example `escapeCelName('x-y')` is `'x__dash__y'`, `escapeCelName('namespace')` is `'__namespace__'`.
 */
export function escapeCelName(name: string): string | undefined {
  if (name === '' || /^[0-9]/.test(name)) return undefined;
  if (CEL_RESERVED_WORDS.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z0-9_./-]*$/.test(name)) return undefined;
  return name.replace(/__|[./-]/g, (s) => ESCAPES[s] as string);
}

/** A node of a structural schema (`openAPIV3Schema` or below) as plain JSON. */
export type CelSchemaNode = Readonly<Record<string, unknown>>;

/**
 * A node of `@marcbachmann/cel-js` 8's parse tree, as far as {@link rewriteHasMacros} and
 * {@link undeclaredFieldSelection} read it: its operator (`id`, `.`, `.?`, `call`, …), its arguments (child nodes,
 * a field name, or arrays of them), the source offsets it spans, and after a type check its `checkedType`.
 */
export interface CelAstNode {
  readonly op: string;
  readonly args: unknown;
  /** Offset of the node's token (a field selection: the field name). */
  readonly pos: number;
  readonly start: number;
  readonly end: number;
  readonly checkedType?: CelCheckedType;
}

/** The type cel-js's checker gave a node: its name, its kind (`optional`, `list`, …) and an optional's value type. */
export interface CelCheckedType {
  readonly name: string;
  readonly kind: string;
  readonly valueType?: CelCheckedType;
}

const schemaChild = (v: unknown): CelSchemaNode | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as CelSchemaNode) : undefined;

/** apiserver `WithTypeAndObjectMeta`: `apiVersion`, `kind` and `metadata.name`/`generateName` are always there. */
export function withTypeAndObjectMeta(s: CelSchemaNode): CelSchemaNode {
  const props = schemaChild(s.properties) ?? {};
  const isString = (v: unknown) => schemaChild(v)?.type === 'string';
  const meta = schemaChild(props.metadata);
  const metaProps = schemaChild(meta?.properties);
  if (
    isString(props.kind) &&
    isString(props.apiVersion) &&
    meta?.type === 'object' &&
    isString(metaProps?.name) &&
    isString(metaProps?.generateName)
  )
    return s;
  const str = { type: 'string' };
  return {
    ...s,
    properties: {
      ...props,
      kind: str,
      apiVersion: str,
      metadata: { type: 'object', properties: { name: str, generateName: str } },
    },
  };
}
