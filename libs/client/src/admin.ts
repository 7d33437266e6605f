/**
 * The admin API client: `new MailyardAdmin({ adminKey, basePath })` for /admin/v1 (tenants and
 * API keys), which the gateway serves only when it runs with ADMIN_API_KEY (404 otherwise). A
 * separate class from Mailyard because it holds a different, more powerful key. None of its
 * calls is retried after a network failure: each one creates or revokes something.
 */
import type {
  CreateKeyResponse,
  CreateTenantResponse,
  CreateTenantSchema,
  KeyScope,
} from '@mailyard/contracts';
import type { z } from 'zod';
import { type MailyardOptions, type MessageResponse, httpOptions } from './client';
import { type CallOptions, type HttpOptions, call } from './http';

export interface MailyardAdminOptions extends Omit<MailyardOptions, 'apiKey'> {
  /** The gateway's ADMIN_API_KEY. */
  adminKey: string;
}

export type CreateTenantInput = z.input<typeof CreateTenantSchema>;

export class MailyardAdmin {
  private readonly http: HttpOptions;

  constructor(options: MailyardAdminOptions) {
    if (!options?.adminKey) throw new TypeError('MailyardAdmin: adminKey is required');
    this.http = httpOptions('MailyardAdmin', options.adminKey, options);
  }

  private async req<T>(c: CallOptions): Promise<T> {
    return (await call<T>(this.http, c)).body;
  }

  readonly tenants = {
    /** POST /admin/v1/tenants: the new tenant and its first API key (shown this once). */
    create: (input: CreateTenantInput) =>
      this.req<CreateTenantResponse>({ method: 'POST', path: '/admin/v1/tenants', body: input }),
  };

  readonly keys = {
    /**
     * POST /admin/v1/tenants/{tenantId}/keys: another API key for the tenant (shown this once),
     * scope `full` unless `options.scope` says otherwise.
     */
    create: (tenantId: string, options?: { scope?: KeyScope; name?: string }) =>
      this.req<CreateKeyResponse>({
        method: 'POST',
        path: `/admin/v1/tenants/${encodeURIComponent(tenantId)}/keys`,
        ...(options ? { body: options } : {}),
      }),
    /** DELETE /admin/v1/keys/{keyId}: the key stops working at once on this gateway. */
    revoke: (keyId: string) =>
      this.req<MessageResponse>({ method: 'DELETE', path: `/admin/v1/keys/${encodeURIComponent(keyId)}` }),
  };
}
