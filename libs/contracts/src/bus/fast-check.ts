/**
 * Plain-code fast paths of the bus's per-message zod checks (the envelope every consumer
 * decodes, the send service's command in both versions), run once per bus message. Each decides only what it is
 * sure of: what it accepts, its schema accepts with the same result (fast-check.test.ts compares
 * them on generated values); anything else returns false/undefined and the schema decides and
 * words the error as before.
 */
import type { BusEnvelope } from './envelope';
import { MAX_COPIES_PER_COMMAND, type SendEmailMessage } from './send-command';
import type { SendEmailGroup, SendEmailGroupItem } from './send-command-group';

/** A JSON object (what JSON.parse makes); anything else (arrays, class instances) goes to the schema. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const positiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;
const optionalString = (v: unknown) => v === undefined || typeof v === 'string';
const isCopyList = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length > 0 && v.length <= MAX_COPIES_PER_COMMAND && v.every(nonEmpty);

/** True only for values BusEnvelopeSchema accepts (it returns them unchanged, see bus/delivery). */
export function isBusEnvelopeFast(v: unknown): v is BusEnvelope {
  return (
    isPlainObject(v) &&
    nonEmpty(v.id) &&
    nonEmpty(v.type) &&
    positiveInt(v.version) &&
    typeof v.occurred_at === 'string' &&
    optionalString(v.traceparent) &&
    optionalString(v.tenant_id)
  );
}

/**
 * What SendEmailMessageSchema.safeParse(v).data is (only its four keys), or undefined: ask the
 * schema. A `copy_ids` key that is not a valid list goes to the schema (which then reads the
 * single-copy shape).
 */
export function sendEmailCommandFast(v: unknown): SendEmailMessage | undefined {
  if (!isPlainObject(v)) return undefined;
  const { ref_id, tenant_id, copy_id, copy_ids, attempt } = v;
  if (!nonEmpty(ref_id) || !nonEmpty(tenant_id) || !positiveInt(attempt)) return undefined;
  if (copy_ids === undefined) return nonEmpty(copy_id) ? { ref_id, tenant_id, copy_id, attempt } : undefined;
  if (!isCopyList(copy_ids)) return undefined;
  return { ref_id, tenant_id, copy_ids: [...copy_ids], attempt };
}

/**
 * What SendEmailGroupSchema.safeParse(v).data is (only its keys, items in order), or undefined:
 * ask the schema.
 */
export function sendEmailGroupFast(v: unknown): SendEmailGroup | undefined {
  if (!isPlainObject(v)) return undefined;
  const { sends, attempt } = v;
  if (!positiveInt(attempt) || !Array.isArray(sends) || sends.length === 0) return undefined;
  const out: SendEmailGroupItem[] = [];
  let copies = 0;
  for (const item of sends) {
    if (!isPlainObject(item)) return undefined;
    const { tenant_id, ref_id, copy_ids, traceparent } = item;
    if (!nonEmpty(tenant_id) || !nonEmpty(ref_id) || !isCopyList(copy_ids) || !optionalString(traceparent))
      return undefined;
    copies += copy_ids.length;
    if (copies > MAX_COPIES_PER_COMMAND) return undefined;
    out.push(
      traceparent === undefined
        ? { tenant_id, ref_id, copy_ids: [...copy_ids] }
        : { tenant_id, ref_id, copy_ids: [...copy_ids], traceparent },
    );
  }
  return { sends: out, attempt };
}
