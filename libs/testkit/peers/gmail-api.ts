/**
 * A Gmail API stand-in (REST v1, the paths and JSON shapes of the Gmail API reference) with an
 * in-memory mailbox, for tests that drive the real googleapis client with `rootUrl` pointed here.
 * TLS with the test CA by default (see api-stand-in.ts for faults and the bearer grant).
 *
 * Served: users.getProfile, users.labels.list, users.messages.list (q, labelIds,
 * includeSpamTrash, maxResults, pageToken), users.messages.get (format raw | minimal),
 * users.messages.send (JSON `raw`, or upload with uploadType media | multipart), users.history.list
 * (startHistoryId, historyTypes, labelId, paging; 404 for an expired start id). `userId` is `me`
 * or the account's address. Errors use Google's JSON error shape.
 *
 * Behaviour where Google documents it: send assigns Gmail's own Message-ID (Gmail
 * cannot set Message-ID; docs/providers.md); a message joins `threadId` only when it has In-Reply-To or References
 * and the thread's Subject (Re:/Fwd: aside), else it starts a thread; a message to the account
 * itself is labelled SENT and INBOX; SPAM and TRASH are listed only with includeSpamTrash.
 * Where Google is silent, a choice: `after:N` / `before:N` are strict (internal date in seconds
 * > N / < N); `to:` matches To, `cc:` Cc, `from:` From; a query term the stand-in does not know
 * is a 400, so a test notices a client sending something unexpected.
 */
import { randomBytes } from 'node:crypto';
import {
  type ApiStandIn,
  type BearerCheck,
  BearerGrant,
  type StandInReply,
  type StandInRequest,
  headerAddresses,
  messageHeaders,
  replaceHeader,
  startApiStandIn,
} from './api-stand-in';

export interface GmailSeed {
  raw: Buffer | string;
  /** Default ['INBOX']. */
  labelIds?: string[];
  /** Default now. */
  internalDate?: Date;
  /** Joins an existing thread (default: a new one). */
  threadId?: string;
}

export interface GmailStoredMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  internalDate: Date;
  historyId: number;
  raw: Buffer;
  headers: Record<string, string>;
}

export interface GmailSentRecord {
  message: GmailStoredMessage;
  /** Every To, Cc and Bcc address the message went to. */
  recipients: string[];
  /** How the client sent it: JSON `raw`, or an upload. */
  via: 'json' | 'media' | 'multipart';
}

export interface GmailStandIn extends ApiStandIn {
  email: string;
  grant: BearerGrant;
  /** Adds a message as delivered mail would arrive (a messageAdded history record). */
  add(seed: GmailSeed): GmailStoredMessage;
  messages(): GmailStoredMessage[];
  sent: GmailSentRecord[];
  /** The mailbox's current history id. */
  historyId(): number;
  /** Start ids below `historyId` now answer 404 (Gmail keeps history for a limited time). */
  expireHistoryBefore(historyId: number): void;
  /** A Gmail-shaped error body for `fail()`. */
  error(status: number, reason: string, message?: string): unknown;
}

export interface GmailStandInOptions {
  email?: string;
  tls?: boolean;
  /** User labels besides the system ones: id -> name. */
  userLabels?: Record<string, string>;
  /**
   * Which bearer tokens the API accepts, instead of the stand-in's own `grant`: e.g. the tokens
   * an OAuth stand-in issues for the account (`auth.bearer(email, scope)`, oauth-standin.ts), for
   * tests where the service obtains and refreshes its tokens itself.
   */
  bearer?: BearerCheck;
}

const SYSTEM_LABELS = ['INBOX', 'SENT', 'SPAM', 'TRASH', 'DRAFT', 'UNREAD', 'STARRED', 'IMPORTANT'];

function googleError(status: number, reason: string, message: string): unknown {
  const names: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    429: 'RESOURCE_EXHAUSTED',
    500: 'INTERNAL',
    503: 'UNAVAILABLE',
  };
  return {
    error: {
      code: status,
      message,
      errors: [{ message, domain: 'global', reason }],
      status: names[status] ?? 'UNKNOWN',
    },
  };
}

const fail = (status: number, reason: string, message: string): StandInReply => ({
  status,
  body: googleError(status, reason, message),
});

const normalizeSubject = (s: string | undefined) =>
  (s ?? '')
    .replace(/^\s*((re|fwd?|aw|wg)\s*:\s*)+/i, '')
    .trim()
    .toLowerCase();

/** A parsed `q`: every term must match; a term is a list of alternatives (braces are OR). */
type Term = Array<(m: GmailStoredMessage) => boolean>;

function parseQuery(q: string): Term[] {
  const terms: Term[] = [];
  const tokens = q.match(/\{[^}]*\}|\S+/g) ?? [];
  for (const token of tokens) {
    const alternatives = token.startsWith('{') ? token.slice(1, -1).trim().split(/\s+/) : [token];
    terms.push(alternatives.map(parseOperator));
  }
  return terms;
}

function parseOperator(op: string): (m: GmailStoredMessage) => boolean {
  const m = /^([a-z]+):(.+)$/i.exec(op);
  if (!m) throw new Error(`the stand-in does not support the search term ${JSON.stringify(op)}`);
  const [, name, value] = m as unknown as [string, string, string];
  const seconds = (msg: GmailStoredMessage) => Math.floor(msg.internalDate.getTime() / 1000);
  switch (name.toLowerCase()) {
    case 'after':
    case 'before': {
      if (!/^\d+$/.test(value)) throw new Error(`the stand-in reads ${name}: as epoch seconds only`);
      const n = Number(value);
      return name === 'after' ? (msg) => seconds(msg) > n : (msg) => seconds(msg) < n;
    }
    case 'from':
    case 'to':
    case 'cc': {
      const want = value.toLowerCase();
      return (msg) => headerAddresses(msg.headers[name.toLowerCase()]).includes(want);
    }
    case 'in':
    case 'label': {
      const want = value.toUpperCase();
      return (msg) => msg.labelIds.some((l) => l.toUpperCase() === want);
    }
    default:
      throw new Error(`the stand-in does not support the search operator ${name}:`);
  }
}

/** The message and how it came: JSON `{raw, threadId}` or an upload (media / multipart/related). */
function readSend(req: StandInRequest): { raw: Buffer; threadId?: string; via: GmailSentRecord['via'] } {
  const uploadType = req.url.searchParams.get('uploadType');
  if (!req.url.pathname.startsWith('/upload/')) {
    const body = JSON.parse(req.body.toString('utf8')) as { raw?: string; threadId?: string };
    if (!body.raw)
      throw new Error("'raw' RFC822 payload message string or uploading message via /upload/* URL required");
    return {
      raw: Buffer.from(body.raw, 'base64url'),
      ...(body.threadId ? { threadId: body.threadId } : {}),
      via: 'json',
    };
  }
  if (uploadType === 'media') return { raw: req.body, via: 'media' };
  if (uploadType !== 'multipart') throw new Error(`unsupported uploadType ${uploadType}`);
  const boundary = /boundary=("?)([^";]+)\1/.exec(String(req.headers['content-type'] ?? ''))?.[2];
  if (!boundary) throw new Error('multipart upload without a boundary');
  const parts = splitMultipart(req.body, boundary);
  if (parts.length !== 2) throw new Error(`multipart upload with ${parts.length} parts`);
  const meta = JSON.parse(parts[0]!.toString('utf8')) as { threadId?: string };
  return { raw: parts[1]!, ...(meta.threadId ? { threadId: meta.threadId } : {}), via: 'multipart' };
}

/** The bodies of a multipart/related payload, byte for byte (each part's headers dropped). */
function splitMultipart(body: Buffer, boundary: string): Buffer[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Buffer[] = [];
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    let part = body.subarray(start, next);
    part = part.subarray(part.indexOf('\r\n') + 2); // the line break after the delimiter
    const headEnd = part.indexOf('\r\n\r\n');
    let content = part.subarray(headEnd + 4);
    if (content.subarray(-2).toString() === '\r\n') content = content.subarray(0, -2);
    parts.push(content);
    at = next;
  }
  return parts;
}

export async function startGmailApi(options: GmailStandInOptions = {}): Promise<GmailStandIn> {
  const email = (options.email ?? 'owner@gmail.test').toLowerCase();
  const grant = new BearerGrant('ya29.standin');
  const byId = new Map<string, GmailStoredMessage>();
  const history: Array<{ id: number; message: GmailStoredMessage; labelIds: string[] }> = [];
  const sent: GmailSentRecord[] = [];
  const userLabels = options.userLabels ?? {};
  let historyId = 1000;
  let expiredBefore = 0;
  let idCounter = 0x18c0_0000;

  const newId = () => (++idCounter).toString(16).padStart(16, '0');

  const store = (raw: Buffer, labelIds: string[], internalDate: Date, threadId?: string) => {
    const id = newId();
    historyId += 7; // history ids grow with gaps (users.history.list)
    const message: GmailStoredMessage = {
      id,
      threadId: threadId ?? id,
      labelIds,
      internalDate,
      historyId,
      raw,
      headers: messageHeaders(raw),
    };
    byId.set(id, message);
    history.push({ id: historyId, message, labelIds: [...labelIds] });
    return message;
  };

  const threadFor = (raw: Buffer, threadId: string | undefined): string | undefined => {
    if (!threadId) return undefined;
    const thread = [...byId.values()].filter((m) => m.threadId === threadId);
    if (thread.length === 0) return undefined;
    const h = messageHeaders(raw);
    const replies = Boolean(h['in-reply-to'] || h.references);
    const sameSubject = normalizeSubject(h.subject) === normalizeSubject(thread[0]!.headers.subject);
    return replies && sameSubject ? threadId : undefined;
  };

  const resource = (m: GmailStoredMessage, format: string) => ({
    id: m.id,
    threadId: m.threadId,
    labelIds: m.labelIds,
    snippet: '',
    historyId: String(m.historyId),
    internalDate: String(m.internalDate.getTime()),
    sizeEstimate: m.raw.length,
    ...(format === 'raw' ? { raw: m.raw.toString('base64url') } : {}),
  });

  const pageOf = <T>(items: T[], req: StandInRequest, max: number) => {
    const size = Math.max(1, Math.min(max, Number(req.url.searchParams.get('maxResults') ?? 100) || 100));
    const token = req.url.searchParams.get('pageToken');
    const offset = token ? Number(Buffer.from(token, 'base64url').toString().replace(/^o:/, '')) : 0;
    const page = items.slice(offset, offset + size);
    const next =
      offset + size < items.length ? Buffer.from(`o:${offset + size}`).toString('base64url') : null;
    return { page, next };
  };

  const route = (req: StandInRequest): StandInReply => {
    const m = /^(\/upload)?\/gmail\/v1\/users\/([^/]+)(\/.*)?$/.exec(req.url.pathname);
    if (!m) return fail(404, 'notFound', 'Not Found');
    const user = decodeURIComponent(m[2]!).toLowerCase();
    if (user !== 'me' && user !== email) return fail(403, 'forbidden', `Delegation denied for ${email}`);
    const path = m[3] ?? '';
    const q = req.url.searchParams;

    if (req.method === 'GET' && path === '/profile') {
      const threads = new Set([...byId.values()].map((x) => x.threadId));
      return {
        status: 200,
        body: {
          emailAddress: email,
          messagesTotal: byId.size,
          threadsTotal: threads.size,
          historyId: String(historyId),
        },
      };
    }
    if (req.method === 'GET' && path === '/labels') {
      const labels = [
        ...SYSTEM_LABELS.map((id) => ({ id, name: id, type: 'system' })),
        ...Object.entries(userLabels).map(([id, name]) => ({ id, name, type: 'user' })),
      ];
      return { status: 200, body: { labels } };
    }
    if (req.method === 'GET' && path === '/messages') {
      let terms: Term[];
      try {
        terms = parseQuery(q.get('q') ?? '');
      } catch (err) {
        return fail(400, 'invalidArgument', (err as Error).message);
      }
      const labels = q.getAll('labelIds');
      const spamTrash = q.get('includeSpamTrash') === 'true';
      const matching = [...byId.values()]
        .filter((x) => spamTrash || !x.labelIds.some((l) => l === 'SPAM' || l === 'TRASH'))
        .filter((x) => labels.every((l) => x.labelIds.includes(l)))
        .filter((x) => terms.every((alternatives) => alternatives.some((t) => t(x))))
        .sort((a, b) => b.internalDate.getTime() - a.internalDate.getTime() || (a.id < b.id ? 1 : -1));
      const { page, next } = pageOf(matching, req, 500);
      return {
        status: 200,
        body: {
          ...(page.length > 0 ? { messages: page.map((x) => ({ id: x.id, threadId: x.threadId })) } : {}),
          ...(next ? { nextPageToken: next } : {}),
          resultSizeEstimate: matching.length,
        },
      };
    }
    const get = /^\/messages\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && get) {
      const msg = byId.get(decodeURIComponent(get[1]!));
      if (!msg) return fail(404, 'notFound', 'Requested entity was not found.');
      const format = q.get('format') ?? 'full';
      if (format !== 'raw' && format !== 'minimal')
        return fail(400, 'invalidArgument', `the stand-in serves format raw or minimal, not ${format}`);
      return { status: 200, body: resource(msg, format) };
    }
    if (req.method === 'POST' && path === '/messages/send') {
      let input: ReturnType<typeof readSend>;
      try {
        input = readSend(req);
      } catch (err) {
        return fail(400, 'invalidArgument', (err as Error).message);
      }
      const h = messageHeaders(input.raw);
      const recipients = [...headerAddresses(h.to), ...headerAddresses(h.cc), ...headerAddresses(h.bcc)];
      if (recipients.length === 0) return fail(400, 'invalidArgument', 'Recipient address required');
      if (input.threadId && ![...byId.values()].some((x) => x.threadId === input.threadId))
        return fail(404, 'notFound', 'Requested entity was not found.');
      const gmailId = `<CA+${randomBytes(18).toString('base64url')}@mail.gmail.com>`;
      const raw = replaceHeader(input.raw, 'Message-ID', `Message-ID: ${gmailId}`);
      const labels = recipients.includes(email) ? ['SENT', 'INBOX'] : ['SENT'];
      const message = store(raw, labels, new Date(), threadFor(raw, input.threadId));
      sent.push({ message, recipients, via: input.via });
      return {
        status: 200,
        body: { id: message.id, threadId: message.threadId, labelIds: message.labelIds },
      };
    }
    if (req.method === 'GET' && path === '/history') {
      const start = Number(q.get('startHistoryId'));
      if (!q.get('startHistoryId') || !Number.isFinite(start))
        return fail(400, 'invalidArgument', 'Invalid startHistoryId');
      if (start < expiredBefore) return fail(404, 'notFound', 'Requested entity was not found.');
      const types = q.getAll('historyTypes');
      if (types.length > 0 && !types.includes('messageAdded'))
        return fail(400, 'invalidArgument', 'the stand-in records messageAdded history only');
      const label = q.get('labelId');
      const records = history
        .filter((r) => r.id > start && (!label || r.labelIds.includes(label)))
        .map((r) => ({
          id: String(r.id),
          messages: [{ id: r.message.id, threadId: r.message.threadId }],
          messagesAdded: [
            { message: { id: r.message.id, threadId: r.message.threadId, labelIds: r.labelIds } },
          ],
        }));
      const { page, next } = pageOf(records, req, 500);
      return {
        status: 200,
        body: {
          ...(page.length > 0 ? { history: page } : {}),
          ...(next ? { nextPageToken: next } : {}),
          historyId: String(historyId),
        },
      };
    }
    return fail(404, 'notFound', `the stand-in does not serve ${req.method} ${req.url.pathname}`);
  };

  const server = await startApiStandIn({
    grant: options.bearer ?? grant,
    tls: options.tls ?? true,
    route,
    unauthorized: () => ({
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
      body: googleError(
        401,
        'authError',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      ),
    }),
  });

  return {
    ...server,
    email,
    grant,
    add(seed) {
      const raw = typeof seed.raw === 'string' ? Buffer.from(seed.raw, 'utf8') : seed.raw;
      return store(raw, seed.labelIds ?? ['INBOX'], seed.internalDate ?? new Date(), seed.threadId);
    },
    messages: () => [...byId.values()],
    sent,
    historyId: () => historyId,
    expireHistoryBefore(id) {
      expiredBefore = id;
    },
    error: (status, reason, message = 'stand-in error') => googleError(status, reason, message),
  };
}
