/**
 * The `substitutions` field of a send, normalized: keyed by lowercased recipient address, values
 * as strings (numbers and booleans in their string form, null as empty). A plain loop rather
 * than nested zod records: a mail merge may carry 100,000 values, which zod's per-value
 * machinery turned into seconds of blocked event loop. The rule of the send schema's
 * `substitutions` field (send.ts), which reports each problem.
 */
import { addressKey, parseAddress } from '../validation/address';
import { fieldPath } from '../validation/messages';

export type Substitutions = Record<string, Record<string, string>>;

/** Where a problem is reported: its message and, when it is inside the field, its path there. */
export type SubstitutionIssue = (message: string, path?: (string | number)[]) => void;

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `subs` normalized, or null when anything in it is invalid (each problem told to `issue`; `path` is the field's, read only then). */
export function normalizeSubstitutions(
  subs: unknown,
  path: () => ReadonlyArray<string | number>,
  issue: SubstitutionIssue = () => {},
): Substitutions | null {
  if (!isPlainObject(subs)) {
    issue(`${fieldPath(path())} must be an object`);
    return null;
  }
  const out: Substitutions = {};
  let valid = true;
  for (const [key, vars] of Object.entries(subs)) {
    if (!isPlainObject(vars)) {
      issue(`${fieldPath([...path(), key])} must be an object`, [key]);
      valid = false;
      continue;
    }
    const values: Record<string, string> = {};
    for (const [name, v] of Object.entries(vars)) {
      if (typeof v === 'string') values[name] = v;
      else if (typeof v === 'number' || typeof v === 'boolean') values[name] = String(v);
      else if (v === null) values[name] = '';
      else {
        issue(`${fieldPath([...path(), key, name])} must be a string, number or boolean`, [key, name]);
        valid = false;
      }
    }
    out[key] = values;
  }
  if (!valid) return null;
  const byAddress: Substitutions = {};
  for (const [key, vars] of Object.entries(out)) {
    const parsed = parseAddress(key);
    if (!parsed) {
      issue(`substitutions keys must be recipient email addresses (got ${JSON.stringify(key)})`);
      valid = false;
      continue;
    }
    const k = addressKey(parsed.email);
    if (byAddress[k]) {
      issue(`substitutions has more than one entry for ${parsed.email}`);
      valid = false;
    }
    byAddress[k] = vars;
  }
  return valid ? byAddress : null;
}
