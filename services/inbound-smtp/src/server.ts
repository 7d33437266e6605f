/**
 * Wires smtp-server's hooks to the policy (acceptance.ts, header-block.ts) and the store; decides
 * nothing itself. Every resource a client can ask for is bounded (docs/inbound.md "Limits"):
 * - onConnect: per-client connection limit (INBOUND_MAX_PER_IP, an IPv6 client by its /64:
 *   client-key.ts; 421 when exceeded) and the session deadline (INBOUND_SESSION_TIMEOUT_MS:
 *   `421 4.4.2` and the connection is closed, however busy the client keeps it);
 * - onMailFrom: accepted (no AUTH, we only receive for our domains);
 * - onRcptTo: the recipient count first (decideRecipientCount: a repeated recipient is kept
 *   once, `452 4.5.3` past INBOUND_MAX_RECIPIENTS), then on the bounce domain the service's own
 *   signed addresses only and on SERVICE_DOMAIN its report addresses only (serviceAddressesOn,
 *   service-address.ts + decideServiceRecipient), elsewhere route lookup
 *   + decideRecipient (550 for unknown or deleted domains: no relaying; 450 while the domain is
 *   not verified), then decideRecipientMix (a transaction holds strict_replies recipients only
 *   or none: 452 4.5.3 for the other kind); past INBOUND_MAX_RECIPIENTS refusals in one session
 *   (the 452s, answered by sending later, do not count) it is closed (`421 4.7.0`);
 * - onData: reads the message holding at most INBOUND_MAX_MESSAGE_BYTES of it and nothing past
 *   the budget shared by all sessions (message-reader.ts, byte-budget.ts: 552 / 452 after the
 *   final dot, the rest discarded as it arrives), within INBOUND_DATA_TIMEOUT_MS (`421 4.4.2`,
 *   nothing stored); refuses headers over the limits of header-block.ts, the message's or its
 *   MIME parts' together (part-headers.ts; 552 5.3.4);
 *   applies the strict_replies check (one verdict for all recipients), stores the raw message durably (one
 *   statement shared with the other sessions storing at that moment: group-commit.ts), only then
 *   answers 250, and hands the stored message to onStored (index.ts processes it in this
 *   process, from memory; the 250 does not wait for that). A storage failure answers 451.
 * SMTP has one reply per DATA (LMTP-style per-recipient replies do not exist in SMTP): the
 * RCPT-time rule that keeps strict_replies recipients in transactions of their own makes that one
 * reply right for every recipient (550 with the rule's text, or 250), none dropped behind a 250.
 */
import type { Readable } from 'node:stream';
import {
  ByteBudget,
  type Db,
  type Logger,
  MAX_HEADER_BYTES,
  clientKey,
  gauge,
  messageHeaderProblem,
  readMessage,
} from '@mailyard/platform';
import type { InboundRecipient, NewInboundMessage, StoredInboundMessage } from '@mailyard/store';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import {
  type ServiceAddressScope,
  decideAfterData,
  decideRecipient,
  decideRecipientCount,
  decideRecipientMix,
  decideServiceRecipient,
  serviceAddressesOn,
  splitRecipient,
} from './acceptance';
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

export interface InboundServer {
  smtp: SMTPServer;
  /** Message bytes held by the sessions now, and the most ever held at once. */
  held(): { bytes: number; peak: number };
}

type Accepted = InboundRecipient & { strictReplies: boolean };

interface SessionState {
  /** Accepted recipients of the current message by normalised address (insertion order kept). */
  accepted: Map<string, Accepted>;
  deadline: NodeJS.Timeout;
  /** The DATA stream being read, destroyed when a deadline passes. */
  reading: Readable | null;
  /** The message is in and being stored: a deadline waits for the reply. */
  storing: boolean;
  /** The session deadline passed while storing: close right after the reply. */
  expired: boolean;
  /** RCPTs refused for good (5xx) in this session. */
  refusals: number;
}

/** What smtp-server's connection objects offer that this file uses. */
interface Connection {
  id: string;
  send(code: number, message: string): void;
}

const smtpError = (code: number, message: string) =>
  Object.assign(new Error(message), { responseCode: code });

const heldBytes = gauge(
  'mailyard_inbound_held_bytes',
  'Message bytes the MX sessions of this process hold now (receiving and storing), each server against its INBOUND_MAX_INFLIGHT_BYTES',
);

export function createInboundServer(deps: InboundServerDeps): InboundServer {
  const { db, logger, settings } = deps;
  const perClient = new Map<string, number>();
  const sessions = new Map<string, SessionState>();
  const budget = new ByteBudget(settings.maxInflightBytes, (delta) => heldBytes.inc(delta));
  const sessionExpired = () =>
    smtpError(421, '4.4.2 Session time limit exceeded, closing connection (try again later)');
  const dataExpired = () =>
    smtpError(421, '4.4.2 DATA time limit exceeded, closing connection (try again later)');

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
      const key = clientKey(session.remoteAddress);
      const count = (perClient.get(key) ?? 0) + 1;
      if (count > settings.maxPerIp)
        return callback(smtpError(421, '4.7.0 Too many connections from your address'));
      perClient.set(key, count);
      const deadline = setTimeout(() => expire(session.id), settings.sessionTimeoutMs);
      deadline.unref();
      sessions.set(session.id, {
        accepted: new Map(),
        deadline,
        reading: null,
        storing: false,
        expired: false,
        refusals: 0,
      });
      callback();
    },

    // smtp-server calls onClose for every session, also those refused above or by maxClients:
    // only a session that was counted gives its slot back.
    onClose(session) {
      const state = sessions.get(session.id);
      if (!state) return;
      clearTimeout(state.deadline);
      sessions.delete(session.id);
      const key = clientKey(session.remoteAddress);
      const count = (perClient.get(key) ?? 1) - 1;
      if (count <= 0) perClient.delete(key);
      else perClient.set(key, count);
    },

    onMailFrom(_address, session, callback) {
      const state = sessions.get(session.id);
      if (state) state.accepted = new Map();
      callback();
    },

    onRcptTo(address, session, callback) {
      void rcptTo(address, session).then(
        () => callback(),
        (err: Error & { responseCode?: number }) => {
          if (!err.responseCode) logger.error('RCPT lookup failed', { error: err.message });
          callback(
            err.responseCode
              ? refused(session.id, err)
              : smtpError(451, '4.3.0 Temporary failure, try again later'),
          );
        },
      );
    },

    onData(stream, session, callback) {
      void data(stream, session).then(
        (reply) => {
          callback(null, reply);
          afterReply(session.id);
        },
        (err: Error & { responseCode?: number }) => {
          if (!err.responseCode) logger.error('storing inbound message failed', { error: err.message });
          callback(err.responseCode ? err : smtpError(451, '4.3.0 Temporary failure, try again later'));
          afterReply(session.id);
        },
      );
    },
  });

  /**
   * A refused RCPT. Each costs a lookup: past INBOUND_MAX_RECIPIENTS refusals (5xx: unknown
   * users, relaying; 450: a domain not verified now; not the 452s of the recipient cap and of
   * the strict_replies rule, which an honest client answers by sending the rest later) the
   * session is closed with 421, as Postfix's hard error limit.
   */
  function refused(id: string, err: Error & { responseCode?: number }): Error {
    const state = sessions.get(id);
    if (!state || err.responseCode === 452 || (err.responseCode ?? 0) < 450) return err;
    if (++state.refusals <= settings.maxRecipients) return err;
    return smtpError(421, '4.7.0 Too many refused recipients, closing connection');
  }

  /** The session deadline: a DATA being read is cut (its reply is the 421), else 421 now. */
  function expire(id: string): void {
    const state = sessions.get(id);
    if (!state) return;
    if (state.storing) {
      state.expired = true;
      return;
    }
    if (state.reading) state.reading.destroy(sessionExpired());
    else connectionOf(id)?.send(421, sessionExpired().message);
  }

  function afterReply(id: string): void {
    const state = sessions.get(id);
    if (!state?.expired) return;
    state.expired = false;
    setImmediate(() => connectionOf(id)?.send(421, sessionExpired().message));
  }

  function connectionOf(id: string): Connection | undefined {
    for (const c of server.connections as Set<Connection>) if (c.id === id) return c;
    return undefined;
  }

  async function rcptTo(address: SMTPServerAddress, session: SMTPServerSession): Promise<void> {
    const parts = splitRecipient(address.address);
    if (!parts) throw smtpError(553, '5.1.3 Malformed recipient address');
    const state = sessions.get(session.id);
    if (!state) throw smtpError(421, '4.3.0 Session closed');
    const key = `${parts.username}@${parts.domain}`;
    const count = decideRecipientCount(state.accepted, key, settings.maxRecipients);
    if (count.kind === 'repeat') return;
    if (count.kind === 'over') throw smtpError(count.code, count.message);
    const scope = serviceAddressesOn(parts.domain, settings.bounceDomain, settings.serviceDomain);
    const recipient = scope
      ? await serviceRecipient(address.address, parts, scope)
      : await tenantRecipient(address.address, parts);
    const first = state.accepted.values().next();
    const mix = decideRecipientMix(
      address.address,
      first.done ? null : first.value.strictReplies,
      recipient.strictReplies,
    );
    if (!mix.ok) throw smtpError(mix.code, mix.message);
    state.accepted.set(key, recipient);
  }

  async function tenantRecipient(
    address: string,
    parts: { username: string; domain: string },
  ): Promise<Accepted> {
    const route = await deps.roundTrips.route(parts.domain, parts.username);
    const decision = decideRecipient(
      address,
      route ? { wildcard: route.domain.wildcard, verified: route.verified, address: route.address } : null,
    );
    if (!decision.accept || !route)
      throw smtpError(decision.accept ? 550 : decision.code, decision.accept ? '' : decision.message);
    return {
      address: `${parts.username}@${parts.domain}`,
      tenantId: route.domain.tenantId,
      domain: route.domain.domain,
      mailerId: route.mailerId,
      strictReplies: decision.strictReplies,
    };
  }

  /**
   * RCPT TO on the bounce domain (or the report addresses on SERVICE_DOMAIN): only verified
   * service addresses (a forged tag is 550).
   */
  async function serviceRecipient(
    address: string,
    parts: { username: string; domain: string },
    scope: ServiceAddressScope,
  ): Promise<Accepted> {
    const resolved = await resolveServiceAddress(db, deps.returnPathKey, parts.username);
    const decision = decideServiceRecipient(address, kindOf(resolved), scope);
    if (!decision.accept || !resolved) throw smtpError(550, decision.accept ? '' : decision.message);
    return {
      address: `${parts.username}@${parts.domain}`,
      tenantId: 'recipient' in resolved ? resolved.recipient.tenantId : '',
      domain: parts.domain,
      mailerId: '',
      service: resolved.kind,
      strictReplies: false,
    };
  }

  async function data(stream: Readable, session: SMTPServerSession): Promise<string> {
    const state = sessions.get(session.id);
    if (!state) throw smtpError(421, '4.3.0 Session closed');
    state.reading = stream;
    const deadline = setTimeout(() => stream.destroy(dataExpired()), settings.dataTimeoutMs);
    let read: Awaited<ReturnType<typeof readMessage>>;
    try {
      read = await readMessage(stream, settings.maxMessageBytes, budget);
    } finally {
      clearTimeout(deadline);
      state.reading = null;
    }
    if (read.kind === 'too-big')
      throw smtpError(552, `5.3.4 Message exceeds the size limit of ${settings.maxMessageBytes} bytes`);
    if (read.kind === 'no-budget') throw smtpError(452, '4.3.1 Insufficient system storage, try again later');
    state.storing = true;
    try {
      return await store(read.raw, session, state);
    } finally {
      read.release();
      state.storing = false;
    }
  }

  async function store(raw: Buffer, session: SMTPServerSession, state: SessionState): Promise<string> {
    const problem = messageHeaderProblem(raw);
    if (problem) throw smtpError(552, `5.3.4 ${problem}`);
    const inReplyTo = headerValue(raw, 'in-reply-to');
    const recipients: InboundRecipient[] = [];
    // One verdict for all: the recipients of a transaction are all strict_replies or none
    // (decideRecipientMix at RCPT), so a rejection is every recipient's and the 550 says so.
    for (const r of state.accepted.values()) {
      const d = decideAfterData(r.address, r.strictReplies, inReplyTo);
      if (!d.accept) {
        logger.info('message rejected after DATA', { recipient: r.address, reason: d.message });
        throw smtpError(550, d.message);
      }
      const { strictReplies: _, ...recipient } = r;
      recipients.push(recipient);
    }
    if (recipients.length === 0) throw smtpError(550, '5.5.1 No valid recipients');
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

  return { smtp: server, held: () => ({ bytes: budget.held, peak: budget.peak }) };
}

/**
 * The first value of a header in the raw message's header block ('' when absent), unfolded;
 * the block read is at most MAX_HEADER_BYTES (the caller has refused larger ones).
 */
export function headerValue(raw: Buffer, name: string): string {
  const end = raw.subarray(0, MAX_HEADER_BYTES + 4).indexOf('\r\n\r\n');
  const head = raw.subarray(0, end < 0 ? Math.min(raw.length, MAX_HEADER_BYTES) : end).toString('latin1');
  const re = new RegExp(`^${name}[ \\t]*:(.*(?:\\r?\\n[ \\t].*)*)`, 'im');
  const m = re.exec(head);
  return m?.[1] ? m[1].replace(/\r?\n[ \t]+/g, ' ').trim() : '';
}
