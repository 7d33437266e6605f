/**
 * API keys managed by the tenant (docs/api/keys.md): `POST /v1/keys`, `GET /v1/keys`,
 * `DELETE /v1/keys/{key_id}`. A key's scope bounds what it may do: `full` everything, `send` only
 * sending (and cancelling a send), `read` only GET routes. The key itself is shown once, at create.
 */
import { z } from 'zod';
import { hasControlChars } from '../validation/control';

export const KEY_SCOPES = ['full', 'send', 'read'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** Most keys one tenant may hold at once (revoked keys do not count). */
export const MAX_KEYS_PER_TENANT = 100;

export const keyScopeSchema = z.enum(KEY_SCOPES, {
  errorMap: () => ({ message: 'scope must be one of full, send, read' }),
});

export const CreateApiKeySchema = z
  .object({
    name: z
      .string({ required_error: 'name is required', invalid_type_error: 'name must be a string' })
      .trim()
      .min(1, 'name is required')
      .max(100, 'name must be at most 100 characters')
      .refine((s) => !hasControlChars(s), 'name must not contain control characters'),
    scope: keyScopeSchema.default('full'),
  })
  .strict();
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeySchema>;

export interface CreateApiKeyResponse {
  success: true;
  key_id: string;
  /** The key itself: shown only in this answer. */
  api_key: string;
}

/** A key as listed: never the key, only its first characters (`prefix`). */
export interface ApiKeyView {
  key_id: string;
  name: string;
  scope: KeyScope;
  prefix: string;
  created_at: string;
  /** Approximate (written in batches, see docs/operations.md); null when never used. */
  last_used_at: string | null;
}

export interface ListApiKeysResponse {
  success: true;
  data: ApiKeyView[];
}

/** The admin API's optional body for `POST /admin/v1/tenants/{id}/keys`. */
export const AdminIssueKeySchema = z
  .object({ scope: keyScopeSchema.default('full'), name: z.string().trim().max(100).default('') })
  .strict();
