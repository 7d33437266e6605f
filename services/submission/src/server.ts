/**
 * Wires smtp-server's hooks to the submission steps; decides nothing itself (docs/submission.md):
 * - onAuth: PLAIN/LOGIN only on a TLS connection (`530 5.7.0` otherwise, unless
 *   SUBMISSION_ALLOW_INSECURE_AUTH); the password is an API key of scope `full` or `send` (the
 *   username is ignored); a wrong key `535 5.7.8`, counted per client address (auth-failures.ts):
 *   past the limit AUTH answers `454 4.7.0` until the window ends.
 * - onMailFrom: authenticated only (smtp-server answers 530 before); one hit of the tenant's
 *   API budget per message (libs/platform TenantRateLimiter, shared with the API): `451 4.7.1`.
 * - onRcptTo: a valid address, each once, at most SUBMISSION_MAX_RECIPIENTS (`452 4.5.3`).
 * - onData: the message read holding at most SUBMISSION_MAX_BYTES (libs/platform readMessage:
 *   `552 5.3.4` after the final dot), within SUBMISSION_DATA_TIMEOUT_MS (`421 4.4.2`); its header
 *   blocks within the MX's caps (libs/platform part-headers.ts: `552 5.3.4`); converted
 *   (to-send-request.ts), its mailer chosen (choose-mailer.ts), then accepted by THE send
 *   acceptance of POST /v1/email/send (libs/store acceptSend): `250 2.0.0 queued as <ref_id>`
 *   only once the send, its log rows and its commands are committed.
 */
import type { Readable } from 'node:stream';
import { parseSendRequest } from '@mailyard/contracts';
import {
  ByteBudget,
  type Db,
  type Kv,
  type Logger,
  TenantRateLimiter,
  clientKey,
  counter,
  messageHeaderProblem,
  readMessage,
} from '@mailyard/platform';
import {
  type KeyOwner,
  type SendDeps,
  acceptSend,
  findKeyOwner,
  submissionMailerCandidates,
} from '@mailyard/store';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { AuthFailures } from './auth-failures';
import { chooseMailer } from './choose-mailer';
import type { SubmissionSettings } from './settings';
import { answerForRefusal } from './smtp-answers';
import { toSendRequest } from './to-send-request';

export interface SubmissionServerDeps {
  db: Db;
  kv: Kv;
  logger: Logger;
  settings: SubmissionSettings;
  tls: { key: Buffer; cert: Buffer };
  accept: SendDeps;
}

const messages = counter(
  'mailyard_submission_messages_total',
  'Messages answered after DATA by SMTP submission',
  ['outcome'],
);
const authOutcomes = counter('mailyard_submission_auth_total', 'AUTH attempts by outcome', ['outcome']);

const smtpError = (code: number, message: string) =>
  Object.assign(new Error(message), { responseCode: code });

const SCOPES = new Set(['full', 'send']);

export function createSubmissionServers(deps: SubmissionServerDeps): SMTPServer[] {
  const { db, logger, settings } = deps;
  const limiter = new TenantRateLimiter(deps.kv, logger, settings.rateLimit);
  const failures = new AuthFailures(deps.kv, settings.authFailures, settings.authFailureWindowMs);
  const budget = new ByteBudget(4 * settings.maxBytes);

  const options = (secure: boolean): SMTPServerOptions => ({
    secure,
    name: settings.hostname,
    banner: 'Mailyard submission ESMTP',
    size: settings.maxBytes,
    maxClients: settings.maxClients,
    socketTimeout: settings.socketTimeoutMs,
    closeTimeout: 5_000,
    authMethods: ['PLAIN', 'LOGIN'],
    // Checked in onAuth, which answers 530 (smtp-server's own refusal is a non-standard 538).
    allowInsecureAuth: true,
    disableReverseLookup: true,
    earlyTalkerDelay: 0,
    key: deps.tls.key,
    cert: deps.tls.cert,
    logger: false,
    onAuth(auth, session, callback) {
      void authenticate(auth.method, auth.password ?? '', session).then(
        (owner) => callback(null, { user: owner }),
        (err: Error & { responseCode?: number }) => callback(err),
      );
    },
    onMailFrom(_address, session, callback) {
      void mailFrom(session).then(
        () => callback(),
        (err: Error) => callback(err),
      );
    },
    onRcptTo(address, session, callback) {
      const rcpts = session.envelope.rcptTo;
      if (!/^[^\s@<>]+@[^\s@<>]+$/.test(address.address))
        return callback(smtpError(553, '5.1.3 Malformed recipient address'));
      if (rcpts.some((r) => r.address.toLowerCase() === address.address.toLowerCase())) return callback(); // a repeated recipient is kept once (smtp-server adds it again: filtered at DATA)
      if (rcpts.length >= settings.maxRecipients)
        return callback(
          smtpError(452, `4.5.3 Too many recipients (at most ${settings.maxRecipients} per message)`),
        );
      callback();
    },
    onData(stream, session, callback) {
      void data(stream, session).then(
        (reply) => {
          messages.inc({ outcome: 'queued' });
          callback(null, reply);
        },
        (err: Error & { responseCode?: number }) => {
          if (!err.responseCode) logger.error('accepting submitted message failed', { error: err.message });
          messages.inc({ outcome: String(err.responseCode ?? 451) });
          callback(err.responseCode ? err : smtpError(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },
  });

  async function authenticate(
    method: string,
    password: string,
    session: SMTPServerSession,
  ): Promise<KeyOwner> {
    if (!session.secure && !settings.allowInsecureAuth) {
      authOutcomes.inc({ outcome: 'no_tls' });
      throw smtpError(530, '5.7.0 Must issue a STARTTLS command first');
    }
    const client = clientKey(session.remoteAddress);
    const blocked = await failures.blockedFor(client);
    if (blocked > 0) {
      authOutcomes.inc({ outcome: 'blocked' });
      throw smtpError(
        454,
        `4.7.0 Too many failed authentications from your address, try again in ${blocked} s`,
      );
    }
    const key = password.trim();
    const owner = key && key.length <= 256 ? await findKeyOwner(db, key) : null;
    if (!owner || !SCOPES.has(owner.scope)) {
      await failures.record(client);
      authOutcomes.inc({ outcome: 'failed' });
      logger.info('submission AUTH refused', { method, remote: session.remoteAddress });
      throw smtpError(
        535,
        '5.7.8 Authentication credentials invalid (the password is an API key of scope full or send)',
      );
    }
    authOutcomes.inc({ outcome: 'ok' });
    return owner;
  }

  async function mailFrom(session: SMTPServerSession): Promise<void> {
    const owner = session.user as KeyOwner | undefined;
    if (!owner) throw smtpError(530, '5.7.0 Authentication required');
    const hit = await limiter.hit(owner.tenantId, owner.tier);
    if (hit?.limited) {
      const seconds = Math.max(1, Math.ceil((hit.resetAtMs - Date.now()) / 1000));
      throw smtpError(451, `4.7.1 Rate limit exceeded, try again in ${seconds} s`);
    }
  }

  async function data(stream: Readable, session: SMTPServerSession): Promise<string> {
    const owner = session.user as KeyOwner | undefined;
    if (!owner) throw smtpError(530, '5.7.0 Authentication required');
    const deadline = setTimeout(
      () => stream.destroy(smtpError(421, '4.4.2 DATA time limit exceeded, closing connection')),
      settings.dataTimeoutMs,
    );
    let read: Awaited<ReturnType<typeof readMessage>>;
    try {
      read = await readMessage(stream, settings.maxBytes, budget);
    } finally {
      clearTimeout(deadline);
    }
    if (read.kind === 'too-big')
      throw smtpError(552, `5.3.4 Message exceeds the size limit of ${settings.maxBytes} bytes`);
    if (read.kind === 'no-budget') throw smtpError(452, '4.3.1 Insufficient system storage, try again later');
    try {
      const seen = new Set<string>();
      const rcptTo = session.envelope.rcptTo
        .map((r) => r.address)
        .filter((a) => !seen.has(a.toLowerCase()) && seen.add(a.toLowerCase()));
      const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      // The MX's header caps (libs/platform mail/part-headers.ts), checked in one pass before
      // mailparser reads the message: its work on header blocks grows faster than their size.
      const problem = messageHeaderProblem(read.raw);
      if (problem) throw smtpError(552, `5.3.4 ${problem}`);
      const converted = await toSendRequest(read.raw, { mailFrom, rcptTo });
      if (!converted.ok) throw smtpError(converted.code, converted.message);
      const candidates =
        converted.mailerHeader === null
          ? await submissionMailerCandidates(db, owner.tenantId, converted.sender)
          : null;
      const choice = chooseMailer(converted.mailerHeader, converted.sender, candidates);
      if (!choice.ok) throw smtpError(choice.code, choice.message);
      const parsed = parseSendRequest({ ...converted.request, mailer_id: choice.mailerId });
      if (!parsed.success) throw smtpError(550, `5.6.0 ${parsed.error}`.slice(0, 400));
      let refId: string;
      try {
        refId = (await acceptSend(deps.accept, owner.tenantId, parsed.data, null)).refId;
      } catch (err) {
        const e = err as Error & { status?: number };
        if (e.status === undefined || e.status >= 500) throw err;
        const answer = answerForRefusal(e.status, e.message);
        throw smtpError(answer.code, answer.message);
      }
      return `2.0.0 queued as ${refId}`;
    } finally {
      read.release();
    }
  }

  const servers = [new SMTPServer(options(false))];
  if (settings.tlsPort !== null) servers.push(new SMTPServer(options(true)));
  return servers;
}
