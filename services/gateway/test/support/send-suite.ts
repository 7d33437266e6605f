/**
 * Shared set-up of the send API suites (send-*.test.ts, each run in both modes): one gateway per
 * file with a high rate limit (many requests per test; the limit is not what these suites are
 * about), the suite's mailers in every state the send rules distinguish, and request helpers.
 */
import { type Mode, useGateway } from './harness';
import { addDomainMailer, addServerMailer } from './mailers.fixture';

export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const CONTROL_MESSAGE = 'must not contain line breaks or other control characters';
export const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

export type Body = Record<string, unknown>;

/** Registers the suite's hooks (useGateway, mailers) and returns what its tests use. */
export function useSendSuite(mode: Mode) {
  // Many requests per test: the per-tenant rate limit is not what this suite is about.
  const gw = useGateway(mode, { RATE_LIMIT_STANDARD: '1000000' });
  const m: Record<string, string> = {};

  beforeAll(async () => {
    const ctx = gw.ctx;
    m.domain = await addDomainMailer(ctx, gw.tenantId, 'example.com');
    m.idn = await addDomainMailer(ctx, gw.tenantId, 'xn--mller-kva.example');
    m.unverified = await addDomainMailer(ctx, gw.tenantId, 'unverified.test', { verified: false });
    m.disabled = await addDomainMailer(ctx, gw.tenantId, 'disabled.test', { state: 'disabled' });
    m.deletedDomain = await addDomainMailer(ctx, gw.tenantId, 'gone.test', { deleted: true });
    m.smtp = await addServerMailer(ctx, gw.tenantId, { configType: 'basic_smtp' });
    m.deactivated = await addServerMailer(ctx, gw.tenantId, { configType: 'smtp', state: 'deactivated' });
    m.deletedSmtp = await addServerMailer(ctx, gw.tenantId, { configType: 'basic_smtp', deleted: true });
    m.imap = await addServerMailer(ctx, gw.tenantId, { configType: 'basic_imap' });
    m.other = await addDomainMailer(ctx, gw.otherTenantId, 'example.com');
  });

  const base = (): Body => ({
    from: { email: 'sender@example.com', name: 'Sender' },
    to: [{ email: 'alice@dest.test', name: 'Alice' }],
    mailer_id: m.domain,
    subject: 'Hello',
    content: [{ type: 'text/plain', value: 'Hi there' }],
  });
  const send = (body: unknown, opts: { key?: string; idem?: string } = {}) => {
    const r = gw.post('/v1/email/send', undefined, opts.key);
    if (opts.idem !== undefined) r.set('Idempotency-Key', opts.idem);
    return r.send(body as object);
  };
  const q = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    (await gw.ctx.db.query<T>(sql, params)).rows;
  const counts = async (refId: string) => {
    const [s] = await q<{ n: number }>('SELECT count(*)::int AS n FROM sends WHERE ref_id = $1', [refId]);
    const [l] = await q<{ n: number }>('SELECT count(*)::int AS n FROM email_logs WHERE ref_id = $1', [
      refId,
    ]);
    // Commands naming the send (alone or among other sends of a group commit).
    const [o] = await q<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox
        WHERE message->'payload'->'sends' @> jsonb_build_array(jsonb_build_object('ref_id', $1::text))`,
      [refId],
    );
    return { sends: s!.n, logs: l!.n, outbox: o!.n };
  };

  return { gw, m, base, send, q, counts };
}
