/**
 * The one entry point of send validation (POST /v1/email/send): the field rules of
 * SendRequestSchema (send.ts, the one validator of the payload), then the rules across fields.
 */
import { ErrorText } from '../errors';
import { addressKey } from '../validation/address';
import { fieldErrorMap, fieldPath } from '../validation/messages';
import { type SendRequest, SendRequestSchema, deliveryCount, isPerRecipient } from './send';
import { SEND_LIMITS } from './send-limits';

export type ParseSendResult =
  | { success: true; data: SendRequest }
  | { success: false; error: string; details?: string };

/**
 * Validates a send payload: field rules (first problem's message, e.g. `to[0].email must be a
 * valid email address`), then no address twice across to/cc/bcc and at most
 * SEND_LIMITS.maxRecipients deliveries. Template-dependent rules (subject/content required,
 * 30 MB) need the template and are checked by the gateway.
 */
export function parseSendRequest(input: unknown): ParseSendResult {
  const result = SendRequestSchema.safeParse(input ?? {}, { errorMap: fieldErrorMap });
  if (!result.success) {
    const issues = result.error.issues;
    const first = issues[0];
    return {
      success: false,
      error: first?.message ?? ErrorText.invalidRequest,
      ...(issues.length > 1 && first
        ? { details: `${issues.length} problems; first at ${fieldPath(first.path)}` }
        : {}),
    };
  }
  const req = result.data;
  const seen = new Set<string>();
  for (const r of [...req.to, ...(req.cc ?? []), ...(req.bcc ?? [])]) {
    const key = addressKey(r.email);
    if (seen.has(key)) return { success: false, error: ErrorText.duplicateRecipient, details: r.email };
    seen.add(key);
  }
  const deliveries = deliveryCount(req);
  if (deliveries > SEND_LIMITS.maxRecipients) {
    const how = isPerRecipient(req)
      ? 'with substitutions every copy counts its to, cc and bcc recipients'
      : 'to + cc + bcc';
    return {
      success: false,
      error: ErrorText.tooManyRecipients,
      details: `${deliveries} recipients (${how})`,
    };
  }
  return { success: true, data: req };
}
