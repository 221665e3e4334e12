/**
 * `metav1.LabelSelector` (matchLabels + matchExpressions) as the `namespaceSelector` / `objectSelector` of webhooks
 * and of ValidatingAdmissionPolicies use it (apimachinery `LabelSelectorAsSelector`): every requirement must hold;
 * an empty selector matches all.
 */
export interface LabelSelectorSpec {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | string;
    readonly values?: readonly string[];
  }[];
}

/** Whether `labels` satisfy `selector` (absent selector: everything). */
export function selectorMatches(
  selector: LabelSelectorSpec | undefined | null,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (!selector) return true;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(l[e.key] as string)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[e.key] as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
