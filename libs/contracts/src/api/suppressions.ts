/**
 * The suppression list's API (docs/api/suppressions.md): the reasons an address is on it, the
 * subscribe/unsubscribe bodies, and GET/POST/DELETE /v1/suppressions. Addresses are stored and
 * compared by `addressKey` (lowercase, ASCII domain), so every input address is parsed and keyed
 * here, once: a path, body or query value that is not an address never reaches SQL.
 */
import { z } from 'zod';
import { ErrorText } from '../errors';
import { MAX_ADDRESS, addressKey, parseAddress } from '../validation/address';
import { hasControlChars } from '../validation/control';
import { fieldPath, parseWithFieldMessages } from '../validation/messages';
import { pageSizeParam, queryParam } from './query-params';

/** Why an address is on a tenant's suppression list (column suppressions.reason, migration 0032). */
export const SUPPRESSION_REASONS = ['unsubscribe', 'hard_bounce', 'spam_complaint', 'manual'] as const;
export type SuppressionReasonValue = (typeof SUPPRESSION_REASONS)[number];

/** At most this many addresses per POST /v1/suppressions. */
export const SUPPRESSIONS_PER_REQUEST = 1000;

export const SuppressionErrorText = {
  notFound: 'Suppression not found',
  emailsRequired: 'emails is required',
  emailsCount: `emails must hold 1 to ${SUPPRESSIONS_PER_REQUEST} addresses`,
  invalidReason: `reason must be one of ${SUPPRESSION_REASONS.join(', ')}`,
  emailFilterLength: `email must be at most ${MAX_ADDRESS} characters`,
  emailFilterChars: 'email must not contain control characters',
} as const;

/** An address in, its key out (`Jane@Bücher.Example` -> `jane@xn--bcher-kva.example`); null: not an address. */
export function suppressionKey(raw: string): string | null {
  const parsed = raw === '' ? null : parseAddress(raw);
  return parsed ? addressKey(parsed.email) : null;
}

const reasonSchema = z.enum(SUPPRESSION_REASONS, {
  errorMap: () => ({ message: SuppressionErrorText.invalidReason }),
});

/** POST /v1/email/subscribe and /v1/email/unsubscribe: `{email}`, stored lowercased (ASCII domain). */
export const SuppressionRequestSchema = z.object({
  email: z
    .string({ required_error: ErrorText.emailRequired, invalid_type_error: ErrorText.invalidEmail })
    .transform((v, ctx) => {
      const key = suppressionKey(v);
      if (key) return key;
      ctx.addIssue({ code: 'custom', message: v === '' ? ErrorText.emailRequired : ErrorText.invalidEmail });
      return z.NEVER;
    }),
});
export type SuppressionRequest = z.infer<typeof SuppressionRequestSchema>;

export interface SuppressionResponse {
  success: true;
  message: string;
}

/**
 * POST /v1/suppressions: 1..1000 addresses (each checked like every address of the API: no
 * CR/LF, at most 254 characters), keyed and deduplicated; `reason` defaults to `manual` (any of
 * the four is accepted, for imports from another provider).
 */
export const AddSuppressionsSchema = z.object({
  emails: z
    .array(
      z.string().transform((v, ctx) => {
        const key = suppressionKey(v);
        if (key) return key;
        ctx.addIssue({ code: 'custom', message: `${fieldPath(ctx.path)} must be a valid email address` });
        return z.NEVER;
      }),
      { required_error: SuppressionErrorText.emailsRequired },
    )
    .min(1, SuppressionErrorText.emailsCount)
    .max(SUPPRESSIONS_PER_REQUEST, SuppressionErrorText.emailsCount)
    .transform((keys) => [...new Set(keys)]),
  reason: reasonSchema.default('manual'),
});
export type AddSuppressions = z.output<typeof AddSuppressionsSchema>;

/** Parses a POST /v1/suppressions body; the first problem's message, e.g. `emails[2] must be a valid email address`. */
export const parseAddSuppressions = (input: unknown) => parseWithFieldMessages(AddSuppressionsSchema, input);

/**
 * GET /v1/suppressions query. `email` is a case-insensitive substring of the stored address
 * (`example.com`, `jane@`, a whole address): what people search a list by. `reason` exact.
 */
export const SuppressionsQuerySchema = z.object({
  email: queryParam(
    z
      .string()
      .max(MAX_ADDRESS, SuppressionErrorText.emailFilterLength)
      .refine((v) => !hasControlChars(v), SuppressionErrorText.emailFilterChars)
      .transform((v) => v.toLowerCase()),
  ),
  reason: queryParam(reasonSchema),
  pageSize: pageSizeParam(),
  pageToken: queryParam(z.string()),
});
export type SuppressionsQuery = z.output<typeof SuppressionsQuerySchema>;

/** Parses the query; the first problem's message. */
export const parseSuppressionsQuery = (input: unknown) =>
  parseWithFieldMessages(SuppressionsQuerySchema, input);

/** One entry of the list (docs/api/suppressions.md). `ref_id`: the send that caused it, null for manual/API. */
export interface SuppressionEntry {
  email: string;
  reason: SuppressionReasonValue;
  ref_id: string | null;
  created_at: string;
}

export interface ListSuppressionsResponse {
  success: true;
  data: SuppressionEntry[];
  nextPageToken: string | null;
  totalCount: number;
}

export interface GetSuppressionResponse {
  success: true;
  data: SuppressionEntry;
}

export interface AddSuppressionsResponse {
  success: true;
  /** Addresses newly suppressed. */
  added: number;
  /** Addresses of the request that were already on the list (duplicates in the request count once). */
  existing: number;
}
