/**
 * A Microsoft Graph mail stand-in (v1.0 paths and JSON shapes of the Graph reference) with an
 * in-memory mailbox, TLS with the test CA by default (faults and the bearer grant: see
 * api-stand-in.ts). Served:
 *
 * - GET /me; GET /me/mailFolders/{id | well-known name} (inbox, sentitems, junkemail,
 *   deleteditems, drafts)
 * - GET /me/mailFolders/{id}/messages with $select, $top (1-1000, default 10), $skip,
 *   $filter (receivedDateTime ge/gt/le/lt, joined by `and`), $orderby (receivedDateTime; must
 *   lead the $filter: InefficientFilter otherwise), or $search (KQL: participants, from, to, cc,
 *   bcc, received with >= <= > < : on dates, joined by AND) which answers at most `searchCap`
 *   (1000) results, sorted by sent date, and cannot be combined with $filter or $orderby;
 *   @odata.nextLink paging
 * - GET /me/mailFolders/{id}/messages/delta: first round with $filter receivedDateTime ge,
 *   pages of `Prefer: odata.maxpagesize`, @odata.deltaLink; later rounds return messages added
 *   to the folder and `@removed` entries; `expireDeltaTokens()` makes every link issued so far
 *   answer 410 syncStateNotFound
 * - GET /me/messages/{id}, GET /me/messages/{id}/$value (the stored bytes)
 * - POST /me/messages with base64 MIME (Content-Type text/plain): a draft (201, the message);
 *   POST /me/messages/{id}/send (202): to Sent Items (and a copy to the inbox when the account
 *   is a recipient); DELETE /me/messages/{id}: to Deleted Items. A From that is not the account
 *   (or a `sendAs` address) is 403 ErrorSendAsDenied.
 *
 * Ids never change when a message moves (as with `Prefer: IdType="ImmutableId"`). The Message-ID
 * of a MIME draft is kept as its internetMessageId; a reply (In-Reply-To / References naming a
 * stored message) joins that message's conversation.
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
  startApiStandIn,
} from './api-stand-in';

export const GRAPH_FOLDERS = ['inbox', 'sentitems', 'junkemail', 'deleteditems', 'drafts'] as const;
export type GraphFolderName = (typeof GRAPH_FOLDERS)[number];

export interface GraphSeed {
  raw: Buffer | string;
  /** Default inbox. */
  folder?: GraphFolderName;
  /** Default now. */
  receivedDateTime?: Date;
  /** Default receivedDateTime. */
  sentDateTime?: Date;
}

export interface GraphStoredMessage {
  id: string;
  folder: GraphFolderName;
  receivedDateTime: Date;
  sentDateTime: Date;
  internetMessageId: string;
  conversationId: string;
  isDraft: boolean;
  raw: Buffer;
  headers: Record<string, string>;
}

export interface GraphStandIn extends ApiStandIn {
  email: string;
  grant: BearerGrant;
  add(seed: GraphSeed): GraphStoredMessage;
  messages(): GraphStoredMessage[];
  folderId(name: GraphFolderName): string;
  /** Moves a message as the user would (a delta change for both folders). */
  move(id: string, to: GraphFolderName): void;
  /** Messages sent through POST /me/messages/{id}/send, with every To, Cc and Bcc address. */
  sent: Array<{ message: GraphStoredMessage; recipients: string[] }>;
  /** Every delta and skip token issued so far answers 410 syncStateNotFound. */
  expireDeltaTokens(): void;
  /** A Graph-shaped error body for `fail()`. */
  error(code: string, message?: string): unknown;
}

export interface GraphStandInOptions {
  email?: string;
  tls?: boolean;
  /** Results one $search answers at most (Graph: 1000). */
  searchCap?: number;
  /** Other From addresses the account may send as. */
  sendAs?: string[];
  /**
   * Which bearer tokens the API accepts, instead of the stand-in's own `grant`: e.g. the tokens
   * an OAuth stand-in issues for the account (`auth.bearer(email, scope)`, oauth-standin.ts), for
   * tests where the service obtains and refreshes its tokens itself.
   */
  bearer?: BearerCheck;
}

const graphError = (code: string, message: string) => ({
  error: {
    code,
    message,
    innerError: { date: new Date().toISOString().slice(0, 19), 'request-id': randomBytes(8).toString('hex') },
  },
});
const fail = (status: number, code: string, message: string): StandInReply => ({
  status,
  body: graphError(code, message),
});
const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const opaqueId = () => `AAkALg${randomBytes(24).toString('base64url')}`;
const encodeToken = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const decodeToken = <T>(t: string): T | null => {
  try {
    return JSON.parse(Buffer.from(t, 'base64url').toString()) as T;
  } catch {
    return null;
  }
};

type Predicate = (m: GraphStoredMessage) => boolean;

function dateCompare(op: string, value: number): (t: number) => boolean {
  switch (op) {
    case 'ge':
    case '>=':
      return (t) => t >= value;
    case 'gt':
    case '>':
      return (t) => t > value;
    case 'le':
    case '<=':
      return (t) => t <= value;
    case 'lt':
    case '<':
      return (t) => t < value;
    default:
      throw new Error(`unsupported operator ${op}`);
  }
}

/** `receivedDateTime ge 2024-01-01T00:00:00Z and ...` */
function parseFilter(filter: string): Predicate {
  const clauses = filter.split(/\s+and\s+/i).map((clause) => {
    const m = /^receivedDateTime\s+(ge|gt|le|lt)\s+(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)$/i.exec(
      clause.trim(),
    );
    if (!m) throw new Error(`Invalid filter clause: ${clause}`);
    const test = dateCompare(m[1]!.toLowerCase(), Date.parse(m[2]!));
    return (msg: GraphStoredMessage) => test(msg.receivedDateTime.getTime());
  });
  return (msg) => clauses.every((c) => c(msg));
}

/** KQL subset: `participants:a AND received>=2024-01-01 ...` (dates compare by UTC day). */
function parseSearch(search: string): Predicate {
  const text = search.trim().replace(/^"(.*)"$/s, '$1');
  const terms = text.split(/\s+AND\s+/).map((term): Predicate => {
    const addr = /^(participants|from|to|cc|bcc):(\S+)$/i.exec(term.trim());
    if (addr) {
      const field = addr[1]!.toLowerCase();
      const want = addr[2]!.toLowerCase();
      const fields = field === 'participants' ? ['from', 'to', 'cc', 'bcc'] : [field];
      return (m) => fields.some((f) => headerAddresses(m.headers[f]).includes(want));
    }
    const date = /^received(>=|<=|>|<|:)(\d{4}-\d{2}-\d{2})$/i.exec(term.trim());
    if (date) {
      const day = Date.parse(`${date[2]}T00:00:00Z`);
      const test = date[1] === ':' ? (t: number) => t === day : dateCompare(date[1]!, day);
      return (m) => test(Date.parse(`${m.receivedDateTime.toISOString().slice(0, 10)}T00:00:00Z`));
    }
    throw new Error(`the stand-in does not support the search term ${JSON.stringify(term)}`);
  });
  return (m) => terms.every((t) => t(m));
}

export async function startGraphApi(options: GraphStandInOptions = {}): Promise<GraphStandIn> {
  const email = (options.email ?? 'owner@outlook.test').toLowerCase();
  const sendAs = new Set([email, ...(options.sendAs ?? []).map((a) => a.toLowerCase())]);
  const searchCap = options.searchCap ?? 1000;
  const grant = new BearerGrant('EwB.standin');
  const folderIds = Object.fromEntries(GRAPH_FOLDERS.map((f) => [f, opaqueId()])) as Record<
    GraphFolderName,
    string
  >;
  const folderById = new Map(GRAPH_FOLDERS.map((f) => [folderIds[f], f]));
  const byId = new Map<string, GraphStoredMessage>();
  const changes: Array<{ seq: number; folder: GraphFolderName; id: string }> = [];
  const sent: GraphStandIn['sent'] = [];
  let seq = 0;
  /** Tokens of an earlier generation than this answer 410 (expireDeltaTokens). */
  let generation = 0;
  let origin = '';

  const logChange = (folder: GraphFolderName, id: string) => changes.push({ seq: ++seq, folder, id });

  const conversationOf = (headers: Record<string, string>): string => {
    const referenced = `${headers['in-reply-to'] ?? ''} ${headers.references ?? ''}`.match(/<[^>]+>/g) ?? [];
    for (const ref of referenced) {
      const hit = [...byId.values()].find((m) => m.internetMessageId === ref);
      if (hit) return hit.conversationId;
    }
    return `AAQkA${randomBytes(16).toString('base64url')}`;
  };

  const store = (raw: Buffer, folder: GraphFolderName, received: Date, sentAt: Date, isDraft: boolean) => {
    const headers = messageHeaders(raw);
    const message: GraphStoredMessage = {
      id: opaqueId(),
      folder,
      receivedDateTime: received,
      sentDateTime: sentAt,
      internetMessageId: headers['message-id'] ?? `<${randomBytes(12).toString('hex')}@standin.outlook.test>`,
      conversationId: conversationOf(headers),
      isDraft,
      raw,
      headers,
    };
    byId.set(message.id, message);
    logChange(folder, message.id);
    return message;
  };

  const move = (m: GraphStoredMessage, to: GraphFolderName) => {
    logChange(m.folder, m.id);
    m.folder = to;
    logChange(to, m.id);
  };

  const recipients = (m: GraphStoredMessage, field: string) =>
    headerAddresses(m.headers[field]).map((address) => ({ emailAddress: { address } }));

  const resource = (m: GraphStoredMessage, select: string | null): Record<string, unknown> => {
    const full: Record<string, unknown> = {
      id: m.id,
      receivedDateTime: iso(m.receivedDateTime),
      sentDateTime: iso(m.sentDateTime),
      subject: m.headers.subject ?? '',
      internetMessageId: m.internetMessageId,
      conversationId: m.conversationId,
      parentFolderId: folderIds[m.folder],
      isDraft: m.isDraft,
      from: recipients(m, 'from')[0] ?? null,
      toRecipients: recipients(m, 'to'),
      ccRecipients: recipients(m, 'cc'),
      bccRecipients: recipients(m, 'bcc'),
    };
    if (!select) return full;
    const fields = new Set(['id', ...select.split(',').map((f) => f.trim())]);
    return Object.fromEntries(Object.entries(full).filter(([k]) => fields.has(k)));
  };

  const folderOf = (idOrName: string): GraphFolderName | undefined =>
    folderById.get(idOrName) ?? GRAPH_FOLDERS.find((f) => f === idOrName.toLowerCase());

  const link = (path: string, params: URLSearchParams) =>
    `${origin}/v1.0${path}?${params.toString().replace(/\+/g, '%20')}`;

  const listMessages = (req: StandInRequest, folder: GraphFolderName, path: string): StandInReply => {
    const q = req.url.searchParams;
    const top = Number(q.get('$top') ?? 10);
    if (!Number.isInteger(top) || top < 1 || top > 1000)
      return fail(400, 'ErrorInvalidUrlQuery', 'Invalid $top');
    const skip = Number(q.get('$skip') ?? 0);
    const search = q.get('$search');
    const filter = q.get('$filter');
    const orderby = q.get('$orderby');
    let items = [...byId.values()].filter((m) => m.folder === folder);
    try {
      if (search) {
        if (filter || orderby)
          return fail(
            400,
            'ErrorInvalidUrlQuery',
            'The query parameter $search cannot be combined with $filter or $orderby.',
          );
        const match = parseSearch(search);
        items = items
          .filter(match)
          .sort((a, b) => b.sentDateTime.getTime() - a.sentDateTime.getTime())
          .slice(0, searchCap);
      } else {
        if (filter) items = items.filter(parseFilter(filter));
        const order = (orderby ?? 'receivedDateTime desc').trim().split(/\s+/);
        if (order[0] !== 'receivedDateTime')
          return fail(400, 'ErrorInvalidProperty', `Cannot order by ${order[0]}`);
        if (orderby && filter && !filter.trim().startsWith('receivedDateTime'))
          return fail(
            400,
            'InefficientFilter',
            'The restriction or sort order is too complex for this operation.',
          );
        const dir = order[1]?.toLowerCase() === 'asc' ? 1 : -1;
        items.sort((a, b) => dir * (a.receivedDateTime.getTime() - b.receivedDateTime.getTime()));
      }
    } catch (err) {
      return fail(400, 'BadRequest', (err as Error).message);
    }
    const page = items.slice(skip, skip + top);
    const body: Record<string, unknown> = { value: page.map((m) => resource(m, q.get('$select'))) };
    if (skip + top < items.length) {
      const next = new URLSearchParams(q);
      next.set('$skip', String(skip + top));
      body['@odata.nextLink'] = link(path, next);
    }
    return { status: 200, body };
  };

  interface DeltaState {
    f: GraphFolderName;
    /** Changes up to this sequence number are covered. */
    seq: number;
    /** First round: receivedDateTime lower bound (ms); later rounds: changes after `from`. */
    since: number;
    from?: number;
    off?: number;
    /** The generation the token was issued in. */
    g?: number;
  }

  const delta = (req: StandInRequest, folder: GraphFolderName, path: string): StandInReply => {
    const q = req.url.searchParams;
    const size = Number(/odata\.maxpagesize=(\d+)/.exec(String(req.headers.prefer ?? ''))?.[1] ?? 10);
    const tokenText = q.get('$skiptoken') ?? q.get('$deltatoken');
    let state: DeltaState;
    if (tokenText) {
      const decoded = decodeToken<DeltaState>(tokenText);
      if (!decoded || decoded.f !== folder) return fail(400, 'BadRequest', 'Invalid token');
      if ((decoded.g ?? 0) < generation)
        return fail(410, 'syncStateNotFound', 'The sync state was not found or has expired.');
      state = q.get('$deltatoken')
        ? { f: folder, seq: seq, since: decoded.since, from: decoded.seq, off: 0, g: generation }
        : decoded;
    } else {
      let since = 0;
      const filter = q.get('$filter');
      if (filter) {
        const m = /^receivedDateTime\s+ge\s+(\S+)$/i.exec(filter.trim());
        if (!m)
          return fail(400, 'BadRequest', 'Only receivedDateTime ge is supported in a messages delta $filter');
        since = Date.parse(m[1]!);
      }
      state = { f: folder, seq, since, off: 0, g: generation };
    }
    let entries: Array<Record<string, unknown>>;
    if (state.from === undefined) {
      entries = [...byId.values()]
        .filter((m) => m.folder === folder && m.receivedDateTime.getTime() >= state.since)
        .sort((a, b) => b.receivedDateTime.getTime() - a.receivedDateTime.getTime())
        .map((m) => resource(m, q.get('$select')));
    } else {
      const touched = [
        ...new Set(
          changes
            .filter((c) => c.folder === folder && c.seq > state.from! && c.seq <= state.seq)
            .map((c) => c.id),
        ),
      ];
      entries = touched.flatMap((id) => {
        const m = byId.get(id);
        if (m && m.folder === folder)
          return m.receivedDateTime.getTime() >= state.since ? [resource(m, q.get('$select'))] : [];
        return [{ '@odata.type': '#microsoft.graph.message', id, '@removed': { reason: 'deleted' } }];
      });
    }
    const off = state.off ?? 0;
    const page = entries.slice(off, off + size);
    const body: Record<string, unknown> = { value: page };
    if (off + size < entries.length)
      body['@odata.nextLink'] = link(
        path,
        new URLSearchParams({ $skiptoken: encodeToken({ ...state, off: off + size }) }),
      );
    else
      body['@odata.deltaLink'] = link(
        path,
        new URLSearchParams({
          $deltatoken: encodeToken({ f: folder, seq: state.seq, since: state.since, g: generation }),
        }),
      );
    return { status: 200, body };
  };

  const createDraft = (req: StandInRequest): StandInReply => {
    const type = String(req.headers['content-type'] ?? '');
    if (!type.startsWith('text/plain'))
      return fail(
        400,
        'ErrorInvalidRequest',
        'the stand-in creates messages from MIME (Content-Type: text/plain) only',
      );
    const text = req.body.toString('ascii').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text))
      return fail(400, 'ErrorMimeContentInvalidBase64String', 'Invalid base64 string for MIME content.');
    const raw = Buffer.from(text, 'base64');
    const headers = messageHeaders(raw);
    if (!headers.from && !headers.to)
      return fail(
        400,
        'ErrorMimeContentInvalid',
        'MIME content does not contain all required information, malformed formatting, or empty.',
      );
    const now = new Date();
    const draft = store(raw, 'drafts', now, now, true);
    return { status: 201, body: resource(draft, null) };
  };

  const sendDraft = (m: GraphStoredMessage): StandInReply => {
    if (!m.isDraft) return fail(400, 'ErrorInvalidOperation', 'Only drafts can be sent.');
    const to = [
      ...headerAddresses(m.headers.to),
      ...headerAddresses(m.headers.cc),
      ...headerAddresses(m.headers.bcc),
    ];
    if (to.length === 0) return fail(400, 'ErrorInvalidRecipients', 'At least one recipient is not valid.');
    const from = headerAddresses(m.headers.from)[0];
    if (from && !sendAs.has(from))
      return fail(
        403,
        'ErrorSendAsDenied',
        'The user account which was used to submit this request does not have the right to send mail on behalf of the specified sending account.',
      );
    const now = new Date();
    m.isDraft = false;
    m.sentDateTime = now;
    m.receivedDateTime = now;
    move(m, 'sentitems');
    sent.push({ message: m, recipients: to });
    if (to.includes(email)) {
      const copy = store(m.raw, 'inbox', now, now, false);
      copy.conversationId = m.conversationId;
    }
    return { status: 202 };
  };

  const route = (req: StandInRequest): StandInReply => {
    const path = req.url.pathname.replace(/^\/v1\.0/, '');
    if (path === req.url.pathname) return fail(404, 'BadRequest', 'Unsupported version');
    const q = req.url.searchParams;
    if (req.method === 'GET' && path === '/me') {
      const me = { id: 'standin-user', displayName: 'Stand-in Owner', mail: email, userPrincipalName: email };
      const select = q.get('$select');
      return {
        status: 200,
        body: select
          ? Object.fromEntries(Object.entries(me).filter(([k]) => select.split(',').includes(k)))
          : me,
      };
    }
    let m = /^\/me\/mailFolders\/([^/]+)(\/messages(\/delta)?)?$/.exec(path);
    if (req.method === 'GET' && m) {
      const folder = folderOf(decodeURIComponent(m[1]!));
      if (!folder) return fail(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
      if (m[3]) return delta(req, folder, path);
      if (m[2]) return listMessages(req, folder, path);
      return {
        status: 200,
        body: {
          id: folderIds[folder],
          displayName: folder,
          totalItemCount: [...byId.values()].filter((x) => x.folder === folder).length,
        },
      };
    }
    if (req.method === 'POST' && path === '/me/messages') return createDraft(req);
    m = /^\/me\/messages\/([^/]+)(\/\$value|\/send)?$/.exec(path);
    if (m) {
      const msg = byId.get(decodeURIComponent(m[1]!));
      if (!msg) return fail(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
      if (req.method === 'GET' && m[2] === '/$value')
        return { status: 200, headers: { 'Content-Type': 'text/plain' }, body: msg.raw };
      if (req.method === 'GET' && !m[2]) return { status: 200, body: resource(msg, q.get('$select')) };
      if (req.method === 'POST' && m[2] === '/send') return sendDraft(msg);
      if (req.method === 'DELETE' && !m[2]) {
        move(msg, 'deleteditems');
        return { status: 204 };
      }
    }
    return fail(400, 'BadRequest', `the stand-in does not serve ${req.method} ${req.url.pathname}`);
  };

  const server = await startApiStandIn({
    grant: options.bearer ?? grant,
    tls: options.tls ?? true,
    route,
    unauthorized: () => ({
      status: 401,
      headers: {
        'WWW-Authenticate':
          'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize"',
      },
      body: graphError('InvalidAuthenticationToken', 'Access token has expired or is not yet valid.'),
    }),
  });
  origin = server.url;

  return {
    ...server,
    email,
    grant,
    add(seed) {
      const raw = typeof seed.raw === 'string' ? Buffer.from(seed.raw, 'utf8') : seed.raw;
      const received = seed.receivedDateTime ?? new Date();
      return store(raw, seed.folder ?? 'inbox', received, seed.sentDateTime ?? received, false);
    },
    messages: () => [...byId.values()],
    folderId: (name) => folderIds[name],
    move(id, to) {
      const m = byId.get(id);
      if (!m) throw new Error(`no message ${id}`);
      move(m, to);
    },
    sent,
    expireDeltaTokens() {
      generation++;
    },
    error: (code, message = 'stand-in error') => graphError(code, message),
  };
}
