/**
 * The mailboxes the backfill benchmark imports from (BENCH_PROVIDER), each seeded with the same
 * generated messages, connected to a mailer through the gateway API the way a user connects one,
 * and measured bare (the ceiling: every source fetched once, nothing else):
 *
 * - `imap`: a real Dovecot (libs/testkit peers/dovecot), Maildir files written directly and
 *   indexed before the clock starts; a basic IMAP mailer (POST /v1/imapbasic/verify); ceiling:
 *   one imapflow `FETCH 1:* BODY[]`.
 * - `gmail` / `graph`: the Gmail API / Microsoft Graph stand-ins (libs/testkit peers, HTTPS with
 *   the test CA, in this process) accepting the access tokens the Google / Microsoft identity
 *   stand-ins issue; an OAuth app and an OAuth mailer (POST /v1/oauth/apps, /v1/oauth/login, the
 *   consent, GET /v1/oauth/callback, PUT /v1/mailer/imap for the webhook); ceiling: every raw
 *   source (Gmail `format=raw`, Graph `$value`) fetched once, BACKFILL_API_CONCURRENCY (4) at a
 *   time, over keep-alive HTTPS.
 * Benchmark support only.
 */
import { Agent, globalAgent, request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import { type Dovecot, type DovecotMessage, startDovecot } from '@mailyard/testkit/peers/dovecot';
import { type GmailStandIn, startGmailApi } from '@mailyard/testkit/peers/gmail-api';
import { type GoogleOAuthStandIn, startGoogleOAuth } from '@mailyard/testkit/peers/google-oauth';
import { type GraphStandIn, startGraphApi } from '@mailyard/testkit/peers/graph-api';
import {
  type MicrosoftIdentityStandIn,
  startMicrosoftIdentity,
} from '@mailyard/testkit/peers/microsoft-identity';
import { ImapFlow } from 'imapflow';
import { pidsByName } from '../support/cpu';

export type Provider = 'imap' | 'gmail' | 'graph';
export const PROVIDERS: Provider[] = ['imap', 'gmail', 'graph'];

export const USERS: Record<Provider, string> = {
  imap: 'owner@bench.test',
  gmail: 'owner@gmail.test',
  graph: 'owner@outlook.test',
};
const PASS = 'Bench-Backfill-1';
const DAY = 86_400_000;
const REDIRECT = 'https://api.example.test/v1/oauth/callback';
/** The bench's own token for the ceiling's direct requests (the API stand-ins accept it besides the issued ones). */
const CEILING_TOKEN = 'bench-ceiling-token';

/** The gateway API of the run: method, path, JSON body -> JSON answer (throws unless 2xx). */
export type Api = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;

export interface Ceiling {
  msgs_per_sec: number;
  mb: number;
  command: string;
}

export interface BenchMailbox {
  provider: Provider;
  /** Seconds spent seeding (and, for IMAP, indexing) before the clock starts. */
  seedSeconds: number;
  /** Provider endpoints for the gateway and the worker. */
  env: Record<string, string>;
  /** Processes serving the mailbox outside this one (Dovecot's `imap`); the stand-ins run here. */
  serverPids(): number[];
  /** The mailer, connected through the gateway API, with its incoming webhook at `webhookUrl`. */
  connect(api: Api, gatewayUrl: string, webhookUrl: string): Promise<string>;
  ceiling(): Promise<Ceiling>;
  stop(): Promise<void>;
}

/**
 * A realistic mix: 45% short text/plain (~1.5 KB), 45% multipart/alternative text + HTML
 * (~4 KB), 10% with a 16 KB attachment (base64); dates spread over the past 360 days.
 */
export function benchMessage(i: number, n: number, user: string): DovecotMessage {
  const date = new Date(Date.now() - 360 * DAY + Math.floor((360 * DAY * i) / n));
  const id = String(i).padStart(6, '0');
  const head = [
    `From: Sender ${i % 37} <sender${i % 37}@example.org>`,
    `To: ${user}`,
    ...(i % 5 === 0 ? [`Cc: Team <team${i % 3}@example.org>`] : []),
    `Subject: Quarterly numbers and other news, part ${id}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: <bench-${id}@example.org>`,
    'MIME-Version: 1.0',
  ];
  const para = `Paragraph of message ${id}: the figures for the quarter are in, and they look fine. `.repeat(
    4,
  );
  const text = Array.from({ length: 4 }, () => para).join('\r\n\r\n');
  let raw: string;
  if (i % 10 === 9) {
    const attachment = Buffer.alloc(16_384, i % 251)
      .toString('base64')
      .replace(/.{76}/g, '$&\r\n');
    raw = [
      ...head,
      'Content-Type: multipart/mixed; boundary="mix"',
      '',
      '--mix',
      'Content-Type: text/plain; charset=utf-8',
      '',
      text,
      '--mix',
      `Content-Type: application/pdf; name="report-${id}.pdf"`,
      'Content-Transfer-Encoding: base64',
      `Content-Disposition: attachment; filename="report-${id}.pdf"`,
      '',
      attachment,
      '--mix--',
      '',
    ].join('\r\n');
  } else if (i % 2 === 1) {
    const html = `<html><body>${text
      .split('\r\n\r\n')
      .map((p) => `<p style="margin:0 0 12px">${p}</p>`)
      .join('')}<p><a href="https://example.org/q/${id}">Read more</a></p></body></html>`;
    raw = [
      ...head,
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain; charset=utf-8',
      '',
      text,
      '--alt',
      'Content-Type: text/html; charset=utf-8',
      '',
      html,
      '--alt--',
      '',
    ].join('\r\n');
  } else {
    raw = [...head, 'Content-Type: text/plain; charset=utf-8', '', text, ''].join('\r\n');
  }
  return { raw, date, seen: i % 3 === 0 };
}

export async function openBenchMailbox(
  provider: Provider,
  messages: number,
  ca: Buffer,
): Promise<BenchMailbox> {
  const seed = Array.from({ length: messages }, (_, i) => benchMessage(i, messages, USERS[provider]));
  if (provider === 'imap') return imapMailbox(seed, ca);
  return apiMailbox(provider, seed, ca);
}

function imapClient(dovecot: Dovecot, ca: Buffer): ImapFlow {
  const client = new ImapFlow({
    host: dovecot.host,
    port: 993,
    secure: true,
    auth: { user: USERS.imap, pass: PASS },
    tls: { ca: [ca] },
    logger: false,
  });
  client.on('error', () => {});
  return client;
}

async function imapMailbox(seed: DovecotMessage[], ca: Buffer): Promise<BenchMailbox> {
  const t0 = Date.now();
  const dovecot = await startDovecot({ user: USERS.imap, pass: PASS, messages: seed });
  // Lets Dovecot index the seeded Maildir (the worker's first SELECT would otherwise pay for it).
  const indexer = imapClient(dovecot, ca);
  await indexer.connect();
  await indexer.mailboxOpen('INBOX', { readOnly: true });
  for await (const _ of indexer.fetch('1:*', { uid: true, internalDate: true, size: true })) {
    // reading every message's metadata builds Dovecot's index and cache
  }
  await indexer.logout();
  return {
    provider: 'imap',
    seedSeconds: (Date.now() - t0) / 1000,
    env: {},
    serverPids: () => pidsByName('imap'),
    async connect(api, _gatewayUrl, webhookUrl) {
      const created = await api('POST', '/v1/imapbasic/verify', {
        name: 'Bench mailbox',
        email: USERS.imap,
        config_type: 'imap',
        connection_type: 'basic',
        config: { host: dovecot.host, port: 993, username: USERS.imap, password: PASS, secure: 'SSL' },
        webhook: { url: webhookUrl, method: 'POST', headers: { 'X-Bench': '1' } },
      });
      return String(created.mailer_id);
    },
    async ceiling() {
      const client = imapClient(dovecot, ca);
      await client.connect();
      await client.mailboxOpen('INBOX', { readOnly: true });
      const t = Date.now();
      let n = 0;
      let bytes = 0;
      for await (const m of client.fetch('1:*', { uid: true, source: true })) {
        n++;
        bytes += m.source?.length ?? 0;
      }
      const seconds = (Date.now() - t) / 1000;
      await client.logout();
      return {
        msgs_per_sec: Math.round(n / seconds),
        mb: Math.round(bytes / 1e6),
        command: 'imapflow FETCH 1:* BODY[] on one connection, nothing else',
      };
    },
    stop: () => dovecot.stop(),
  };
}

async function apiMailbox(
  provider: 'gmail' | 'graph',
  seed: DovecotMessage[],
  ca: Buffer,
): Promise<BenchMailbox> {
  const t0 = Date.now();
  const user = USERS[provider];
  // The consent is followed from this process (started without NODE_EXTRA_CA_CERTS): trust the test CA here.
  globalAgent.options.ca = [...rootCertificates, ca.toString()];
  const idp: GoogleOAuthStandIn | MicrosoftIdentityStandIn =
    provider === 'gmail' ? await startGoogleOAuth() : await startMicrosoftIdentity();
  idp.auth.addClient({ clientId: 'bench-client', clientSecret: 'bench-secret', redirectUris: [REDIRECT] });
  idp.auth.account = user;
  const issued = idp.auth.bearer(
    user,
    provider === 'gmail' ? 'https://www.googleapis.com/auth/gmail.readonly' : 'Mail.Read',
  );
  const bearer = {
    accepts: (authorization: string | undefined) =>
      authorization === `Bearer ${CEILING_TOKEN}` || issued.accepts(authorization),
  };
  let gmail: GmailStandIn | null = null;
  let graph: GraphStandIn | null = null;
  const ids: string[] = [];
  if (provider === 'gmail') {
    gmail = await startGmailApi({ email: user, bearer });
    for (const m of seed) ids.push(gmail.add({ raw: m.raw, labelIds: ['INBOX'], internalDate: m.date! }).id);
  } else {
    graph = await startGraphApi({ email: user, bearer });
    for (const m of seed) ids.push(graph.add({ raw: m.raw, receivedDateTime: m.date! }).id);
  }
  const api = (gmail ?? graph)!;
  const env: Record<string, string> =
    provider === 'gmail'
      ? { GOOGLE_OAUTH_URL: idp.url, GMAIL_API_URL: `${api.url}/`, OAUTH_REDIRECT_URI: REDIRECT }
      : { MICROSOFT_LOGIN_URL: idp.url, MICROSOFT_GRAPH_URL: api.url, OAUTH_REDIRECT_URI: REDIRECT };
  return {
    provider,
    seedSeconds: (Date.now() - t0) / 1000,
    env,
    serverPids: () => [],
    async connect(call, gatewayUrl, webhookUrl) {
      const app = await call('POST', '/v1/oauth/apps', {
        provider: provider === 'gmail' ? 'google' : 'microsoft',
        client_id: 'bench-client',
        client_secret: 'bench-secret',
      });
      const login = await call('POST', '/v1/oauth/login', {
        app_id: app.app_id,
        type: provider === 'gmail' ? 'imap' : 'smtp_imap',
      });
      const back = await idp.consent(String(login.url));
      const res = await fetch(`${gatewayUrl}/v1/oauth/callback${back.search}`);
      const created = (await res.json()) as Record<string, unknown>;
      if (res.status !== 201) throw new Error(`oauth callback: ${res.status} ${JSON.stringify(created)}`);
      const mailerId = String(created.mailer_id);
      await call('PUT', '/v1/mailer/imap', {
        mailer_id: mailerId,
        webhook: { url: webhookUrl, method: 'POST', headers: { 'X-Bench': '1' } },
      });
      return mailerId;
    },
    async ceiling() {
      const agent = new Agent({ ca: [ca], keepAlive: true, maxSockets: 4 });
      const path = (id: string) =>
        provider === 'gmail'
          ? `/gmail/v1/users/me/messages/${id}?format=raw`
          : `/v1.0/me/messages/${id}/$value`;
      const t = Date.now();
      let bytes = 0;
      let next = 0;
      const lane = async () => {
        while (next < ids.length) {
          const body = await get(agent, `${api.url}${path(ids[next++]!)}`);
          bytes += provider === 'gmail' ? Buffer.from(JSON.parse(body).raw, 'base64url').length : body.length;
        }
      };
      await Promise.all(Array.from({ length: 4 }, lane));
      const seconds = (Date.now() - t) / 1000;
      agent.destroy();
      return {
        msgs_per_sec: Math.round(ids.length / seconds),
        mb: Math.round(bytes / 1e6),
        command:
          provider === 'gmail'
            ? 'GET users.messages.get format=raw per message, 4 at a time, keep-alive HTTPS, to the stand-in in this process'
            : 'GET /me/messages/{id}/$value per message, 4 at a time, keep-alive HTTPS, to the stand-in in this process',
      };
    },
    async stop() {
      await api.close();
      await idp.close();
    },
  };
}

function get(agent: Agent, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { agent, headers: { authorization: `Bearer ${CEILING_TOKEN}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString('latin1'))
          : reject(new Error(`${url}: ${res.statusCode}`)),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
