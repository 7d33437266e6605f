/**
 * Wires smtp-server's hooks to the policy (acceptance.ts) and the store; decides nothing itself.
 * - onConnect: per-IP connection limit (421 when exceeded);
 * - onMailFrom: accepted (no AUTH, we only receive for our domains);
 * - onRcptTo: on the bounce domain, the service's own signed addresses only (service-address.ts +
 *   decideServiceRecipient); elsewhere route lookup + decideRecipient (550 for unknown domains:
 *   no relaying);
 * - onData: collects the message (SIZE announced in EHLO; 552 when exceeded), applies the
 *   strict_replies check per recipient, stores the raw message durably (one statement shared
 *   with the other sessions storing at that moment: group-commit.ts), only then answers 250, and
 *   hands the stored message to onStored (index.ts processes it in this process, from memory;
 *   the 250 does not wait for that). A storage failure answers 451 (try again).
 * SMTP has one reply per DATA: when strict_replies rejects some but not all recipients, the
 * others are accepted and the rejected ones are logged (LMTP-style per-recipient replies do not
 * exist in SMTP); when it rejects all, the reply is 550 with the rule's text.
 */
import type { Readable } from 'node:stream';
import type { Db, Logger } from '@mailyard/platform';
import type { InboundRecipient, NewInboundMessage, StoredInboundMessage } from '@mailyard/store';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import { decideAfterData, decideRecipient, decideServiceRecipient, splitRecipient } from './acceptance';
import type { InboundRoundTrips } from './group-commit';
import { kindOf, resolveServiceAddress } from './service-address';
import type { InboundSettings } from './settings';

export interface InboundServerDeps {
  db: Db;
  logger: Logger;
  settings: InboundSettings;
  /** Key of the signed service addresses (libs/platform returnPathKey). */
  returnPathKey: Buffer;
  /** The RCPT TO lookups and the group commit of stored messages (group-commit.ts). */
  roundTrips: InboundRoundTrips;
  /** Called after a message is stored and before its 250 is sent (index.ts processes it in-process). */
  onStored?: (message: StoredInboundMessage) => void;
}

type Accepted = InboundRecipient & { strictReplies: boolean };

const smtpError = (code: number, message: string) =>
  Object.assign(new Error(message), { responseCode: code });

export function createInboundServer(deps: InboundServerDeps): SMTPServer {
  const { db, logger, settings } = deps;
  const perIp = new Map<string, number>();
  const counted = new Set<string>();
  const accepted = new Map<string, Accepted[]>();

  const server = new SMTPServer({
    name: settings.hostname,
    banner: 'Mailyard inbound ESMTP',
    size: settings.maxMessageBytes,
    maxClients: settings.maxClients,
    socketTimeout: settings.socketTimeoutMs,
    closeTimeout: 5_000,
    authOptional: true,
    disabledCommands: ['AUTH'],
    hideSTARTTLS: false,
    // The client's PTR name is used nowhere (no Received header is added, mailauth takes the IP
    // and HELO), and smtp-server would look it up with the system resolver, not DNS_SERVERS.
    disableReverseLookup: true,
    // The wait before the greeting that catches early talkers (421 "You talk too soon"):
    // INBOUND_GREETING_DELAY_MS, 0 by default (smtp-server hard-codes 100 ms; the option comes
    // from patches/smtp-server@3.21.6.patch).
    earlyTalkerDelay: settings.greetingDelayMs,
    ...(settings.tls ? { key: settings.tls.key, cert: settings.tls.cert } : {}),
    logger: false,

    onConnect(session, callback) {
      const ip = session.remoteAddress;
      const count = (perIp.get(ip) ?? 0) + 1;
      if (count > settings.maxPerIp)
        return callback(smtpError(421, '4.7.0 Too many connections from your address'));
      perIp.set(ip, count);
      counted.add(session.id);
      callback();
    },

    // smtp-server calls onClose for every session, also those refused above or by maxClients:
    // only a session that was counted gives its slot back.
    onClose(session) {
      accepted.delete(session.id);
      if (!counted.delete(session.id)) return;
      const ip = session.remoteAddress;
      const count = (perIp.get(ip) ?? 1) - 1;
      if (count <= 0) perIp.delete(ip);
      else perIp.set(ip, count);
    },

    onMailFrom(_address, session, callback) {
      accepted.set(session.id, []);
      callback();
    },

    onRcptTo(address, session, callback) {
      void rcptTo(address, session).then(
        () => callback(),
        (err: Error & { responseCode?: number }) => {
          if (!err.responseCode) logger.error('RCPT lookup failed', { error: err.message });
          callback(err.responseCode ? err : smtpError(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },

    onData(stream, session, callback) {
      void data(stream, session).then(
        (reply) => callback(null, reply),
        (err: Error & { responseCode?: number }) => {
          if (!err.responseCode) logger.error('storing inbound message failed', { error: err.message });
          callback(err.responseCode ? err : smtpError(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },
  });

  async function rcptTo(address: SMTPServerAddress, session: SMTPServerSession): Promise<void> {
    const parts = splitRecipient(address.address);
    if (!parts) throw smtpError(553, '5.1.3 Malformed recipient address');
    if (parts.domain === settings.bounceDomain) return serviceRcptTo(address.address, parts, session);
    const route = await deps.roundTrips.route(parts.domain, parts.username);
    const decision = decideRecipient(
      address.address,
      route ? { wildcard: route.domain.wildcard, address: route.address } : null,
    );
    if (!decision.accept || !route)
      throw smtpError(decision.accept ? 550 : decision.code, decision.accept ? '' : decision.message);
    const list = accepted.get(session.id) ?? [];
    list.push({
      address: `${parts.username}@${parts.domain}`,
      tenantId: route.domain.tenantId,
      domain: route.domain.domain,
      mailerId: route.mailerId,
      strictReplies: decision.strictReplies,
    });
    accepted.set(session.id, list);
  }

  /** RCPT TO on the bounce domain: only verified service addresses (a forged tag is 550). */
  async function serviceRcptTo(
    address: string,
    parts: { username: string; domain: string },
    session: SMTPServerSession,
  ): Promise<void> {
    const resolved = await resolveServiceAddress(db, deps.returnPathKey, parts.username);
    const decision = decideServiceRecipient(address, kindOf(resolved));
    if (!decision.accept || !resolved) throw smtpError(550, decision.accept ? '' : decision.message);
    const list = accepted.get(session.id) ?? [];
    list.push({
      address: `${parts.username}@${parts.domain}`,
      tenantId: resolved.kind === 'feedback' ? '' : resolved.recipient.tenantId,
      domain: parts.domain,
      mailerId: '',
      service: resolved.kind,
      strictReplies: false,
    });
    accepted.set(session.id, list);
  }

  async function data(stream: Readable, session: SMTPServerSession): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    if ((stream as Readable & { sizeExceeded?: boolean }).sizeExceeded)
      throw smtpError(552, `5.3.4 Message exceeds the size limit of ${settings.maxMessageBytes} bytes`);
    const raw = Buffer.concat(chunks);
    const inReplyTo = headerValue(raw, 'in-reply-to');
    const recipients: InboundRecipient[] = [];
    let lastRejection = '';
    for (const r of accepted.get(session.id) ?? []) {
      const d = decideAfterData(r.address, r.strictReplies, inReplyTo);
      if (d.accept) {
        const { strictReplies: _, ...recipient } = r;
        recipients.push(recipient);
      } else {
        lastRejection = d.message;
        logger.info('recipient rejected after DATA', { recipient: r.address, reason: d.message });
      }
    }
    if (recipients.length === 0) throw smtpError(550, lastRejection || '5.5.1 No valid recipients');
    const message: NewInboundMessage = {
      remoteIp: session.remoteAddress,
      helo: session.hostNameAppearsAs ?? '',
      mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      recipients,
      raw,
    };
    const id = await deps.roundTrips.store(message);
    deps.onStored?.({ ...message, id, status: 'stored', receivedAt: new Date() });
    return `2.0.0 Ok: queued as ${id}`;
  }

  return server;
}

/** The first value of a header in the raw message's header block ('' when absent), unfolded. */
export function headerValue(raw: Buffer, name: string): string {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end < 0 ? raw.length : end).toString('latin1');
  const re = new RegExp(`^${name}[ \\t]*:(.*(?:\\r?\\n[ \\t].*)*)`, 'im');
  const m = re.exec(head);
  return m?.[1] ? m[1].replace(/\r?\n[ \t]+/g, ' ').trim() : '';
}
