import { z } from 'zod';
import { ErrorText } from '../errors';
import { addressKey, parseAddress } from '../validation/address';

/** POST /v1/email/subscribe and /v1/email/unsubscribe: `{email}`, stored lowercased (ASCII domain). */
export const SuppressionRequestSchema = z.object({
  email: z
    .string({ required_error: ErrorText.emailRequired, invalid_type_error: ErrorText.invalidEmail })
    .transform((v, ctx) => {
      const parsed = v === '' ? null : parseAddress(v);
      if (parsed) return addressKey(parsed.email);
      ctx.addIssue({ code: 'custom', message: v === '' ? ErrorText.emailRequired : ErrorText.invalidEmail });
      return z.NEVER;
    }),
});
export type SuppressionRequest = z.infer<typeof SuppressionRequestSchema>;

export interface SuppressionResponse {
  success: true;
  message: string;
}
