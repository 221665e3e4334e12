/**
 * @packageDocumentation
 * `@kubeloop/core/cel` — how kube-apiserver 1.32 sees a CRD's structural schema from CEL, shared by the CRD
 * compile checks (`@kubeloop/crd`) and the in-process API server (`@kubeloop/envtest`), which may not import each
 * other: the CEL name of a property ({@link escapeCelName}, apiserver `pkg/cel` `Escape`), the words CEL
 * reserves ({@link CEL_RESERVED_WORDS}), and the CEL type of a schema node ({@link schemaCelType}, apiserver
 * `pkg/cel/common` `SchemaDeclType`) as a plain tree each evaluator declares in its own way. No dependencies, no
 * CEL evaluator.
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

/** A CEL scalar type of a schema node (`timestamp` for `date`/`date-time` strings, `bytes` for `byte`). */
export type CelScalarType = 'bool' | 'int' | 'double' | 'string' | 'bytes' | 'timestamp' | 'duration' | 'dyn';

/**
 * The CEL type of a schema node: a scalar, a list, a string-keyed map (`additionalProperties`), or an object
 * whose fields are keyed by their escaped names ({@link escapeCelName}).
 */
export type CelType =
  | CelScalarType
  | { readonly list: CelType }
  | { readonly map: CelType }
  | { readonly object: Readonly<Record<string, CelType>> };

/** A node of a structural schema (`openAPIV3Schema` or below) as plain JSON. */
export type CelSchemaNode = Readonly<Record<string, unknown>>;

function child(v: unknown): CelSchemaNode | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as CelSchemaNode) : undefined;
}

const STRING_FORMATS: Readonly<Record<string, CelScalarType>> = {
  byte: 'bytes',
  duration: 'duration',
  date: 'timestamp',
  'date-time': 'timestamp',
};

/** apiserver `WithTypeAndObjectMeta`: `apiVersion`, `kind` and `metadata.name`/`generateName` are always there. */
function withTypeAndObjectMeta(s: CelSchemaNode): CelSchemaNode {
  const props = child(s.properties) ?? {};
  const isString = (v: unknown) => child(v)?.type === 'string';
  const meta = child(props.metadata);
  const metaProps = child(meta?.properties);
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

/**
 * The CEL type kube-apiserver 1.32 declares for a schema node (apiserver `SchemaDeclType`), or `undefined` when
 * the node is not visible to CEL. `x-kubernetes-int-or-string` is `dyn`; an object with `additionalProperties` is
 * a map; any other object has one field per property whose type is visible and whose name can be escaped (a
 * `x-kubernetes-preserve-unknown-fields` object's unknown fields are not among them); a list or map whose items
 * are not visible is not visible either, nor is a node with no type. `resourceRoot` (the custom resource's root,
 * and each `x-kubernetes-embedded-resource`) adds `apiVersion`, `kind` and `metadata.name`/`generateName`.
 */
export function schemaCelType(s: CelSchemaNode | undefined, resourceRoot = false): CelType | undefined {
  if (!s) return undefined;
  if (s['x-kubernetes-int-or-string'] === true) return 'dyn';
  const node = resourceRoot ? withTypeAndObjectMeta(s) : s;
  const embedded = (c: CelSchemaNode | undefined) => c?.['x-kubernetes-embedded-resource'] === true;
  switch (node.type) {
    case 'array': {
      const items = child(node.items);
      const t = schemaCelType(items, embedded(items));
      return t === undefined ? undefined : { list: t };
    }
    case 'object': {
      const addl = child(node.additionalProperties);
      if (addl) {
        const t = schemaCelType(addl, embedded(addl));
        return t === undefined ? undefined : { map: t };
      }
      const fields: Record<string, CelType> = {};
      for (const [name, p] of Object.entries(child(node.properties) ?? {})) {
        const prop = child(p);
        const t = schemaCelType(prop, embedded(prop));
        const escaped = escapeCelName(name);
        if (t !== undefined && escaped !== undefined) fields[escaped] = t;
      }
      return { object: fields };
    }
    case 'string':
      return STRING_FORMATS[typeof node.format === 'string' ? node.format : ''] ?? 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return 'double';
    case 'integer':
      return 'int';
    default:
      return undefined;
  }
}
