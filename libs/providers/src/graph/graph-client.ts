/**
 * Microsoft Graph mail client (v1.0, base MICROSOFT_GRAPH_URL) for one account, the bearer token
 * coming from its TokenSource; every request goes through the shared retry policy
 * (api/call-policy.ts). Item ids are requested as immutable ids (`Prefer: IdType="ImmutableId"`)
 * so an id stays the same when the message moves (drafts to Sent Items, inbox to trash).
 *
 * - sendMime: `POST /me/sendMail` with MIME answers 202 without any id, so the documented
 *   two-step form is used: `POST /me/messages` with the base64 MIME (Content-Type text/plain)
 *   creates a draft and answers the message (id, internetMessageId, conversationId), then
 *   `POST /me/messages/{id}/send` sends it (202). A draft whose send fails is deleted (best
 *   effort) so a retried send leaves no litter.
 * - wellKnownFolders: inbox, sentitems, junkemail, deleteditems by role.
 * - listWindow: a folder's messages received in an inclusive window, newest first, every
 *   @odata.nextLink followed; with a participant, $search with the window split wherever a
 *   search reaches the 1000-result cap (search-window.ts).
 * - getMime: `GET /me/messages/{id}/$value`, the exact bytes.
 * - oldestReceived: a folder's earliest receivedDateTime (`$orderby=receivedDateTime asc`, `$top=1`).
 * - delta: `GET /me/mailFolders/{id}/messages/delta` from a receivedDateTime (first round) or a
 *   saved @odata.deltaLink; every page followed to the next deltaLink. An expired delta link
 *   answers `resync`.
 * - me: the account's address (mail, else userPrincipalName).
 */
import { DEFAULT_RETRY_POLICY, type RetryPolicy, callProvider } from '../api/call-policy';
import { ProviderRequestError } from '../api/errors';
import type { MailFolderRole } from '../api/folders';
import type { TokenSource } from '../api/token';
import { type GraphRequest, RESYNC_CODES, classifyGraphError, graphFetch, sameGraphUrl } from './graph-http';
import {
  type GraphWindow,
  MESSAGE_REF_FIELDS,
  inGraphWindow,
  listParams,
  odataDateTime,
} from './graph-query';
import { searchByWindows } from './search-window';

export interface GraphClientOptions {
  /** MICROSOFT_GRAPH_URL (ProviderEndpoints.microsoftGraphUrl), without /v1.0. */
  graphUrl: string;
  policy?: Partial<RetryPolicy>;
  /** Page size of listings ($top, odata.maxpagesize); Graph allows up to 1000. */
  pageSize?: number;
  /** Results one $search answers at most (Graph: 1000). */
  searchCap?: number;
  /** Deadline of one HTTP request. */
  timeoutMs?: number;
}

export interface GraphProfile {
  id: string;
  address: string;
  displayName: string;
}

export interface GraphSent {
  /** Graph's (immutable) message id. */
  id: string;
  /** The RFC 5322 Message-ID the message went out with. */
  internetMessageId: string;
  conversationId: string;
}

export interface GraphFolder {
  id: string;
  displayName: string;
}

export interface GraphMessageRef {
  id: string;
  receivedAt: Date;
  internetMessageId: string;
  conversationId: string;
  parentFolderId: string;
}

export type GraphDelta =
  | { kind: 'changes'; changed: GraphMessageRef[]; removed: string[]; deltaLink: string }
  | { kind: 'resync' };

/** The well-known folder name of each role. */
export const GRAPH_ROLE_FOLDERS: Readonly<Record<MailFolderRole, string>> = Object.freeze({
  inbox: 'inbox',
  sent: 'sentitems',
  spam: 'junkemail',
  trash: 'deleteditems',
});

const IMMUTABLE_IDS = 'IdType="ImmutableId"';

interface RawMessageRef {
  id?: string;
  receivedDateTime?: string;
  internetMessageId?: string;
  conversationId?: string;
  parentFolderId?: string;
  '@removed'?: unknown;
}

interface Page {
  value?: RawMessageRef[];
  '@odata.nextLink'?: string;
  '@odata.deltaLink'?: string;
}

function toRef(m: RawMessageRef): GraphMessageRef | null {
  if (!m.id) return null;
  return {
    id: m.id,
    receivedAt: new Date(m.receivedDateTime ?? 0),
    internetMessageId: m.internetMessageId ?? '',
    conversationId: m.conversationId ?? '',
    parentFolderId: m.parentFolderId ?? '',
  };
}

export class GraphClient {
  private readonly base: URL;
  private readonly policy: RetryPolicy;
  private readonly pageSize: number;
  private readonly searchCap: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly tokens: TokenSource,
    options: GraphClientOptions,
  ) {
    this.base = new URL(`${options.graphUrl.replace(/\/+$/, '')}/v1.0/`);
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.policy };
    this.pageSize = Math.max(1, Math.min(1000, options.pageSize ?? 100));
    this.searchCap = options.searchCap ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  async me(): Promise<GraphProfile> {
    const data = await this.json<{
      id?: string;
      mail?: string | null;
      userPrincipalName?: string;
      displayName?: string;
    }>({
      method: 'GET',
      url: this.url('me', { $select: 'id,displayName,mail,userPrincipalName' }),
    });
    return {
      id: data.id ?? '',
      address: data.mail || data.userPrincipalName || '',
      displayName: data.displayName ?? '',
    };
  }

  /** Sends `raw` (recipients from its To/Cc/Bcc headers); answers the sent message's ids. */
  async sendMime(raw: Buffer): Promise<GraphSent> {
    const draft = await this.json<RawMessageRef>({
      method: 'POST',
      url: this.url('me/messages'),
      body: raw.toString('base64'),
      contentType: 'text/plain',
      prefer: [IMMUTABLE_IDS],
    });
    if (!draft.id) throw new ProviderRequestError('Microsoft Graph created a draft without an id', 201, '');
    const path = `me/messages/${encodeURIComponent(draft.id)}`;
    try {
      await this.request({ method: 'POST', url: this.url(`${path}/send`), prefer: [IMMUTABLE_IDS] });
    } catch (err) {
      await this.request({ method: 'DELETE', url: this.url(path), prefer: [IMMUTABLE_IDS] }).catch(() => {});
      throw err;
    }
    return {
      id: draft.id,
      internetMessageId: draft.internetMessageId ?? '',
      conversationId: draft.conversationId ?? '',
    };
  }

  /** The folder of each role, null when the mailbox has none. */
  async wellKnownFolders(): Promise<Record<MailFolderRole, GraphFolder | null>> {
    const out = {} as Record<MailFolderRole, GraphFolder | null>;
    for (const [role, name] of Object.entries(GRAPH_ROLE_FOLDERS) as Array<[MailFolderRole, string]>) {
      try {
        const f = await this.json<{ id?: string; displayName?: string }>({
          method: 'GET',
          url: this.url(`me/mailFolders/${name}`, { $select: 'id,displayName' }),
        });
        out[role] = f.id ? { id: f.id, displayName: f.displayName ?? name } : null;
      } catch (err) {
        if (err instanceof ProviderRequestError && err.status === 404) out[role] = null;
        else throw err;
      }
    }
    return out;
  }

  /**
   * Messages of `folderId` received in the inclusive window, newest first; with `participant`,
   * only those naming it in from, to, cc or bcc. `truncated` is true when a search under a day
   * still reached Graph's result cap (some matching messages may be missing).
   */
  async listWindow(
    folderId: string,
    window: GraphWindow & { participant?: string | null },
  ): Promise<{ messages: GraphMessageRef[]; truncated: boolean }> {
    const path = `me/mailFolders/${encodeURIComponent(folderId)}/messages`;
    const participant = window.participant?.trim() || null;
    if (!participant) {
      const all = await this.allPages(this.url(path, listParams(window, null, this.pageSize)));
      const messages = all.filter((m) => inGraphWindow(m.receivedAt, window));
      return { messages, truncated: false };
    }
    const top = Math.min(this.pageSize, this.searchCap);
    const result = await searchByWindows(
      window,
      async (w) => await this.allPages(this.url(path, listParams(w, participant, top)), this.searchCap),
      this.searchCap,
    );
    return { messages: result.items, truncated: result.truncated };
  }

  /** The earliest receipt time in `folderId`, null when the folder is empty. */
  async oldestReceived(folderId: string): Promise<Date | null> {
    const page = await this.json<Page>({
      method: 'GET',
      url: this.url(`me/mailFolders/${encodeURIComponent(folderId)}/messages`, {
        $select: 'id,receivedDateTime',
        $orderby: 'receivedDateTime asc',
        $top: '1',
      }),
      prefer: [IMMUTABLE_IDS],
    });
    const first = page.value?.[0];
    return first?.receivedDateTime ? new Date(first.receivedDateTime) : null;
  }

  /** The message's MIME source, byte for byte. */
  async getMime(id: string): Promise<Buffer> {
    const res = await this.request({
      method: 'GET',
      url: this.url(`me/messages/${encodeURIComponent(id)}/$value`),
      prefer: [IMMUTABLE_IDS],
    });
    return Buffer.from(await res.arrayBuffer());
  }

  /**
   * Changes to `folderId`'s messages: the first round from `since` (messages received since then),
   * later rounds from the deltaLink the previous one returned.
   */
  async delta(folderId: string, from: { deltaLink: string } | { since: Date }): Promise<GraphDelta> {
    let url =
      'deltaLink' in from
        ? sameGraphUrl(from.deltaLink, this.base)
        : this.url(`me/mailFolders/${encodeURIComponent(folderId)}/messages/delta`, {
            $select: MESSAGE_REF_FIELDS,
            $filter: `receivedDateTime ge ${odataDateTime(from.since)}`,
          });
    const changed = new Map<string, GraphMessageRef>();
    const removed = new Set<string>();
    for (;;) {
      let page: Page;
      try {
        page = await this.json<Page>({
          method: 'GET',
          url,
          prefer: [IMMUTABLE_IDS, `odata.maxpagesize=${this.pageSize}`],
        });
      } catch (err) {
        if (err instanceof ProviderRequestError && (err.status === 410 || RESYNC_CODES.has(err.reason)))
          return { kind: 'resync' };
        throw err;
      }
      for (const m of page.value ?? []) {
        if (!m.id) continue;
        if (m['@removed'] !== undefined) {
          changed.delete(m.id);
          removed.add(m.id);
          continue;
        }
        const ref = toRef(m);
        if (ref) {
          removed.delete(ref.id);
          changed.set(ref.id, ref);
        }
      }
      if (page['@odata.nextLink']) {
        url = sameGraphUrl(page['@odata.nextLink'], this.base);
        continue;
      }
      const deltaLink = page['@odata.deltaLink'];
      if (!deltaLink)
        throw new ProviderRequestError('Microsoft Graph delta ended without a deltaLink', 200, '');
      sameGraphUrl(deltaLink, this.base);
      return { kind: 'changes', changed: [...changed.values()], removed: [...removed], deltaLink };
    }
  }

  /** Every message of a listing (all pages, at most `limit`). */
  private async allPages(first: URL, limit = Number.POSITIVE_INFINITY): Promise<GraphMessageRef[]> {
    const out: GraphMessageRef[] = [];
    let url: URL | null = first;
    while (url && out.length < limit) {
      const page: Page = await this.json<Page>({ method: 'GET', url, prefer: [IMMUTABLE_IDS] });
      for (const m of page.value ?? []) {
        const ref = toRef(m);
        if (ref) out.push(ref);
      }
      const next = page['@odata.nextLink'];
      url = next ? sameGraphUrl(next, this.base) : null;
    }
    return out;
  }

  private url(path: string, params?: Record<string, string> | URLSearchParams): URL {
    const url = new URL(path, this.base);
    if (params) url.search = new URLSearchParams(params).toString().replace(/\+/g, '%20');
    return url;
  }

  private async json<T>(req: GraphRequest): Promise<T> {
    const res = await this.request(req);
    return (await res.json()) as T;
  }

  private request(req: GraphRequest): Promise<Response> {
    return callProvider({
      provider: 'Microsoft Graph',
      tokens: this.tokens,
      policy: this.policy,
      classify: classifyGraphError,
      run: async (token) => {
        const res = await graphFetch(req, token, this.timeoutMs);
        // Read the body inside the try so a connection that drops mid-body is retried too.
        const body = await res.arrayBuffer();
        return new Response(body.byteLength > 0 ? body : null, { status: res.status, headers: res.headers });
      },
    });
  }
}
