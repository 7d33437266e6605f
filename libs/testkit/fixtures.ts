import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import {
  Exchange,
  IdPrefix,
  RoutingKey,
  SEND_EMAIL_COMMAND,
  SEND_EMAIL_COMMAND_VERSION,
  type SendEmailCommand,
  type SendRequestInput,
  SendRequestSchema,
  type SmtpSecureMode,
  type StoredSendRequest,
  commandOfOneCopy,
  domainOf,
  newId,
  planCopies,
  ulid,
} from '@mailyard/contracts';
import { type Db, type Sealer, envelope } from '@mailyard/platform';
import { createTenant, inboundAddresses, inboundDomains, sends } from '@mailyard/store';

/** Rows for the send service's tests, written the way the gateway and domains API write them. */

export async function newTenant(db: Db): Promise<string> {
  const t = await createTenant(db, {
    name: `send-test-${Math.random().toString(36).slice(2, 8)}`,
    tier: 'enterprise',
  });
  return t.id;
}

export interface DkimKeyPair {
  privateKeyPem: string;
  /** The TXT record value to publish at `<selector>._domainkey.<domain>`. */
  txt: string;
}

export function dkimKeyPair(): DkimKeyPair {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  // Derived from the private key, as the domains API publishes it.
  const p = createPublicKey(privateKeyPem).export({ type: 'spki', format: 'der' }).toString('base64');
  return { privateKeyPem, txt: `v=DKIM1; k=rsa; p=${p}` };
}

export async function insertDomainMailer(
  db: Db,
  sealer: Sealer,
  tenantId: string,
  o: { domain: string; selector?: string; key: DkimKeyPair; verified?: boolean },
): Promise<string> {
  const id = newId(IdPrefix.domain);
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, email) VALUES ($1, $2, 'domain', 'domain', $3, '')`,
      [id, tenantId, o.domain],
    );
    await tx.query(
      `INSERT INTO domains (id, tenant_id, name, unicode_name, selector, dkim_public_key, dkim_private_key, verified, verified_at)
       VALUES ($1, $2, $3, $3, $4, $5, $6, $7, CASE WHEN $7 THEN now() END)`,
      [
        id,
        tenantId,
        o.domain,
        o.selector ?? 'mailyard',
        o.key.txt,
        sealer.seal(o.key.privateKeyPem),
        o.verified ?? true,
      ],
    );
  });
  return id;
}

export async function insertSmtpMailer(
  db: Db,
  sealer: Sealer,
  tenantId: string,
  o: {
    host?: string;
    port: number;
    secure?: SmtpSecureMode;
    username?: string;
    password?: string;
    configType?: string;
  },
): Promise<string> {
  const id = newId(IdPrefix.basicSmtp);
  await db.query(
    `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, email, config, secret)
     VALUES ($1, $2, $3, 'basic', 'test smtp', 'sender@example.com', $4::jsonb, $5)`,
    [
      id,
      tenantId,
      o.configType ?? 'basic_smtp',
      JSON.stringify({
        host: o.host ?? '127.0.0.1',
        port: o.port,
        secure: o.secure ?? 'None',
        username: o.username ?? '',
      }),
      sealer.seal(o.password ?? ''),
    ],
  );
  return id;
}

export async function setMailerState(
  db: Db,
  mailerId: string,
  state: 'active' | 'disabled' | 'deactivated' | 'deleted',
) {
  if (state === 'deleted') await db.query('UPDATE mailers SET deleted_at = now() WHERE id = $1', [mailerId]);
  else await db.query('UPDATE mailers SET state = $2 WHERE id = $1', [mailerId, state]);
}

export async function setDomainVerified(db: Db, mailerId: string, verified: boolean) {
  await db.query('UPDATE domains SET verified = $2 WHERE id = $1', [mailerId, verified]);
}

/**
 * The send row of a bare accepted send for sends.insertAccepted (mailer `m1`, an empty stored
 * request, no campaign, custom args or idempotency key): for tests of what the store does with
 * the rows, where the request itself does not matter (acceptSend writes a real one).
 */
export function bareSendRow(refId: string, tenantId: string): Parameters<typeof sends.insertAccepted>[1] {
  return {
    refId,
    tenantId,
    mailerId: 'm1',
    campaignId: null,
    customArgs: null,
    request: { subject: 's', content: [] } as never,
    idempotencyKey: null,
    requestHash: null,
  };
}

/** One recipient's email log row of a send written by insertCopies. */
export interface CopyLog {
  id: string;
  copyId: string;
  email: string;
  refId: string;
}

/**
 * `n` QUEUED copies of one send from `from` through `mailerId` (recipients `r<i>-<ulid>@x.test`),
 * written by the gateway's statement with no outbox commands: for tests that record the copies'
 * events themselves (reputation, stats). Their log rows, in copy order.
 */
export async function insertCopies(
  db: Db,
  o: { tenantId: string; mailerId: string; from: string; n: number },
): Promise<CopyLog[]> {
  const refId = ulid();
  const to = Array.from({ length: o.n }, (_, i) => `r${i}-${ulid().toLowerCase()}@x.test`);
  await sends.insertAcceptedBatch(db, [
    {
      send: {
        refId,
        tenantId: o.tenantId,
        mailerId: o.mailerId,
        campaignId: null,
        customArgs: null,
        request: {
          from: { email: o.from },
          to: to.map((email) => ({ email })),
          subject: 's',
          content: [],
        } as unknown as StoredSendRequest,
      },
      recipients: to.map((email, i) => ({
        copyId: `${refId}.${i + 1}`,
        recipient: email,
        recipientDomain: 'x.test',
        recipientType: 'to' as const,
      })),
      outbox: [],
    },
  ]);
  const { rows } = await db.query<{ id: string; copy_id: string; recipient: string }>(
    'SELECT id, copy_id, recipient FROM email_logs WHERE ref_id = $1 ORDER BY copy_id',
    [refId],
  );
  return rows.map((r) => ({ id: r.id, copyId: r.copy_id, email: r.recipient, refId }));
}

export interface Accepted {
  refId: string;
  copyIds: string[];
  commands: SendEmailCommand[];
}

/**
 * Accepts a send as POST /v1/email/send does: the validated, normalized request with subject
 * and content resolved, written with its QUEUED log rows and one send.email command per copy
 * through the gateway's own statement (sends.insertAccepted). `storeAs` replaces the stored
 * request (to simulate a damaged one).
 */
export async function acceptSend(
  db: Db,
  tenantId: string,
  input: SendRequestInput,
  opts: { storeAs?: (stored: StoredSendRequest) => StoredSendRequest } = {},
): Promise<Accepted> {
  const request = SendRequestSchema.parse(input);
  if (request.subject === undefined || request.content === undefined)
    throw new Error('fixture: subject and content are required');
  const normalized: StoredSendRequest = { ...request, subject: request.subject, content: request.content };
  const stored = opts.storeAs ? opts.storeAs(normalized) : normalized;
  const refId = ulid();
  const copies = planCopies(request, refId);
  const commands = copies.map((c) => ({
    ref_id: refId,
    tenant_id: tenantId,
    copy_id: c.copy_id,
    attempt: 1,
  }));
  await sends.insertAccepted(
    db,
    {
      refId,
      tenantId,
      mailerId: request.mailer_id,
      campaignId: request.campaign_id ?? null,
      customArgs: request.custom_args ?? null,
      request: { ...stored, subject: normalized.subject },
      idempotencyKey: null,
      requestHash: null,
    },
    copies.flatMap((c) =>
      c.recipients.map((r) => ({
        copyId: c.copy_id,
        recipient: r.email,
        recipientDomain: domainOf(r.email),
        recipientType: r.type,
      })),
    ),
    commands.map((command) => ({
      exchange: Exchange.commands,
      routingKey: RoutingKey.sendEmail,
      envelope: envelope(SEND_EMAIL_COMMAND, commandOfOneCopy(command), {
        tenantId,
        version: SEND_EMAIL_COMMAND_VERSION,
      }),
    })),
  );
  return { refId, copyIds: copies.map((c) => c.copy_id), commands };
}

export interface LogRow {
  recipient: string;
  recipient_type: string;
  copy_id: string;
  status: string;
  last_event: string | null;
  failure_reason: string;
  message_id: string;
  attempts: number;
  subject: string;
  delivered_at: Date | null;
}

export async function logsOf(db: Db, refId: string): Promise<LogRow[]> {
  const { rows } = await db.query<LogRow>(
    `SELECT recipient, recipient_type, copy_id, status, last_event, failure_reason, message_id, attempts, subject, delivered_at
       FROM email_logs WHERE ref_id = $1 ORDER BY id`,
    [refId],
  );
  return rows;
}

export interface EventRow {
  copy_id: string;
  event: string;
  attempt: number;
  payload: { event: string; success: boolean; details: Record<string, unknown> & { email: string[] } };
}

export async function eventsOf(db: Db, refId: string): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    'SELECT copy_id, event, attempt, payload FROM email_events WHERE ref_id = $1 ORDER BY id',
    [refId],
  );
  return rows;
}

export interface InboundDomainFixture {
  domain: string;
  /** Where the dispatcher posts the domain's INCOMING_EMAIL events. */
  url: string;
  wildcard?: boolean;
  users?: Array<{ name: string; active?: boolean; strictReplies?: boolean }>;
}

/**
 * A verified sending domain configured for inbound mail, as the domains and inbound APIs write
 * it: the domain mailer (its id is the events' `mailer-id`), the incoming domain (POST to `url`)
 * and its usernames. Returns the mailer id.
 */
export async function insertInboundDomain(
  db: Db,
  sealer: Sealer,
  tenantId: string,
  o: InboundDomainFixture,
): Promise<string> {
  const mailerId = await insertDomainMailer(db, sealer, tenantId, { domain: o.domain, key: dkimKeyPair() });
  await inboundDomains.create(db, {
    tenantId,
    domain: o.domain,
    url: o.url,
    method: 'POST',
    headerNames: [],
    headersSealed: null,
  });
  if (o.wildcard) await inboundDomains.update(db, tenantId, o.domain, { wildcard: true });
  for (const u of o.users ?? []) {
    await inboundAddresses.create(db, tenantId, o.domain, u.name);
    await inboundAddresses.update(db, tenantId, o.domain, u.name, {
      active: u.active ?? true,
      strictReplies: u.strictReplies ?? false,
    });
  }
  return mailerId;
}
