/**
 * Gmail API client (googleapis `gmail` v1, rootUrl = GMAIL_API_URL) for one account, the bearer
 * token coming from its TokenSource. Every call goes through the shared retry policy
 * (api/call-policy.ts); googleapis' own retries are off so there is one policy, not two.
 *
 * - send: `users.messages.send` as a media upload of the raw MIME (multipart with `{threadId}`
 *   metadata when threading, up to Gmail's 35 MB), returning Gmail's message id and thread id.
 *   Gmail assigns the Message-ID itself (docs/providers.md "Gmail API client (`GmailClient`)"); it joins the thread
 *   only when the message also carries In-Reply-To/References and a matching Subject.
 * - profile: the account's address and current historyId.
 * - listMessages / listAllMessages: `users.messages.list` with the search built by gmail-query.ts,
 *   page by page (pageToken), newest first. Callers keep messages in the exact window by
 *   internalDate (`inGmailWindow`).
 * - getRaw: `users.messages.get` with format=raw: the exact bytes, labels, thread, internalDate.
 * - getMeta: `users.messages.get` with format=minimal: labels, thread, internalDate (no body).
 * - history: `users.history.list` (messageAdded) from a startHistoryId over every page; a 404
 *   (history id too old) answers `expired` and the caller syncs in full.
 * - labels / folderLabels: system labels INBOX, SENT, SPAM, TRASH by role.
 *
 * googleapis builds upload URLs from the per-call rootUrl only, so rootUrl goes with every call.
 */
import { Readable } from 'node:stream';
import type { MethodOptions, gmail_v1 } from 'googleapis/build/src/apis/gmail';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, callProvider } from '../api/call-policy';
import { ProviderRequestError } from '../api/errors';
import type { MailFolderRole } from '../api/folders';
import type { TokenSource } from '../api/token';
import { loadGmailApi } from '../lazy-sdks';
import { classifyGmailError } from './gmail-errors';
import { type GmailListQuery, gmailListParams } from './gmail-query';

export interface GmailClientOptions {
  /** GMAIL_API_URL (ProviderEndpoints.gmailApiUrl). */
  apiUrl: string;
  policy?: Partial<RetryPolicy>;
  /** maxResults of list and history pages (Gmail allows 1 to 500). */
  pageSize?: number;
  /** Deadline of one HTTP request. */
  timeoutMs?: number;
  /** The mailbox; 'me' is the token's own account. */
  userId?: string;
}

export interface GmailProfile {
  emailAddress: string;
  historyId: string;
  messagesTotal: number;
}

export interface GmailSent {
  id: string;
  threadId: string;
  labelIds: string[];
}

export interface GmailMessageRef {
  id: string;
  threadId: string;
}

export interface GmailMessageMeta extends GmailMessageRef {
  labelIds: string[];
  /** When Gmail received it (internalDate): what windows are measured on. */
  internalDate: Date;
  historyId: string;
}

export interface GmailRawMessage extends GmailMessageMeta {
  /** The whole RFC 5322 source, byte for byte. */
  raw: Buffer;
}

export interface GmailLabel {
  id: string;
  name: string;
  type: 'system' | 'user';
}

export interface GmailAddedMessage extends GmailMessageRef {
  labelIds: string[];
}

export type GmailHistory =
  | { kind: 'changes'; added: GmailAddedMessage[]; historyId: string }
  | { kind: 'expired' };

/** The system label of each folder role (Gmail's fixed label ids). */
export const GMAIL_ROLE_LABELS: Readonly<Record<MailFolderRole, string>> = Object.freeze({
  inbox: 'INBOX',
  sent: 'SENT',
  spam: 'SPAM',
  trash: 'TRASH',
});

function metaOf(data: gmail_v1.Schema$Message, id: string): GmailMessageMeta {
  return {
    id: data.id ?? id,
    threadId: data.threadId ?? '',
    labelIds: data.labelIds ?? [],
    internalDate: new Date(Number(data.internalDate ?? 0)),
    historyId: data.historyId ?? '',
  };
}

export class GmailClient {
  /** googleapis' client, made on the first call (the SDK is loaded lazily, lazy-sdks.ts). */
  private loaded: gmail_v1.Gmail | undefined;
  private readonly policy: RetryPolicy;
  private readonly pageSize: number;
  private readonly userId: string;

  constructor(
    private readonly tokens: TokenSource,
    private readonly options: GmailClientOptions,
  ) {
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.policy };
    this.pageSize = Math.max(1, Math.min(500, options.pageSize ?? 100));
    this.userId = options.userId ?? 'me';
  }

  async profile(): Promise<GmailProfile> {
    const data = await this.call((o) => this.api.users.getProfile({ userId: this.userId }, o));
    return {
      emailAddress: data.emailAddress ?? '',
      historyId: data.historyId ?? '',
      messagesTotal: data.messagesTotal ?? 0,
    };
  }

  /** Sends `raw` as it is; `threadId` asks Gmail to file it in that thread. */
  async send(raw: Buffer, options: { threadId?: string | null } = {}): Promise<GmailSent> {
    const threadId = options.threadId?.trim();
    const data = await this.call((o) =>
      this.api.users.messages.send(
        {
          userId: this.userId,
          ...(threadId ? { requestBody: { threadId } } : {}),
          media: { mimeType: 'message/rfc822', body: Readable.from([raw]) },
        },
        o,
      ),
    );
    if (!data.id) throw new ProviderRequestError('Gmail API send answered without a message id', 200, '');
    return { id: data.id, threadId: data.threadId ?? data.id, labelIds: data.labelIds ?? [] };
  }

  /** One page of message ids matching `query`, newest first. */
  async listMessages(
    query: GmailListQuery,
    pageToken?: string | null,
  ): Promise<{ messages: GmailMessageRef[]; nextPageToken: string | null }> {
    const p = gmailListParams(query);
    const data = await this.call((o) =>
      this.api.users.messages.list(
        {
          userId: this.userId,
          maxResults: this.pageSize,
          includeSpamTrash: p.includeSpamTrash,
          ...(p.q ? { q: p.q } : {}),
          ...(p.labelIds ? { labelIds: p.labelIds } : {}),
          ...(pageToken ? { pageToken } : {}),
        },
        o,
      ),
    );
    const messages = (data.messages ?? []).flatMap((m) =>
      m.id ? [{ id: m.id, threadId: m.threadId ?? m.id }] : [],
    );
    return { messages, nextPageToken: data.nextPageToken ?? null };
  }

  /** Every message id matching `query` (all pages), newest first. */
  async listAllMessages(query: GmailListQuery): Promise<GmailMessageRef[]> {
    const out: GmailMessageRef[] = [];
    const seen = new Set<string>();
    let pageToken: string | null = null;
    do {
      const page = await this.listMessages(query, pageToken);
      for (const m of page.messages) if (!seen.has(m.id) && seen.add(m.id)) out.push(m);
      pageToken = page.nextPageToken;
    } while (pageToken);
    return out;
  }

  async getRaw(id: string): Promise<GmailRawMessage> {
    const data = await this.call((o) =>
      this.api.users.messages.get({ userId: this.userId, id, format: 'raw' }, o),
    );
    if (typeof data.raw !== 'string')
      throw new ProviderRequestError(`Gmail API returned message ${id} without its raw source`, 200, '');
    return { ...metaOf(data, id), raw: Buffer.from(data.raw, 'base64url') };
  }

  /** Labels, thread and receipt time of a message, without its body. */
  async getMeta(id: string): Promise<GmailMessageMeta> {
    const data = await this.call((o) =>
      this.api.users.messages.get({ userId: this.userId, id, format: 'minimal' }, o),
    );
    return metaOf(data, id);
  }

  /**
   * Messages added since `startHistoryId` (optionally only those with `labelId`), in history
   * order without repeats, and the history id to continue from.
   */
  async history(startHistoryId: string, options: { labelId?: string | null } = {}): Promise<GmailHistory> {
    const added: GmailAddedMessage[] = [];
    const seen = new Set<string>();
    let pageToken: string | null = null;
    let historyId = startHistoryId;
    do {
      let data: gmail_v1.Schema$ListHistoryResponse;
      try {
        data = await this.call((o) =>
          this.api.users.history.list(
            {
              userId: this.userId,
              startHistoryId,
              historyTypes: ['messageAdded'],
              maxResults: this.pageSize,
              ...(options.labelId ? { labelId: options.labelId } : {}),
              ...(pageToken ? { pageToken } : {}),
            },
            o,
          ),
        );
      } catch (err) {
        if (err instanceof ProviderRequestError && err.status === 404) return { kind: 'expired' };
        throw err;
      }
      for (const h of data.history ?? []) {
        for (const a of h.messagesAdded ?? []) {
          const m = a.message;
          if (!m?.id || seen.has(m.id)) continue;
          seen.add(m.id);
          added.push({ id: m.id, threadId: m.threadId ?? m.id, labelIds: m.labelIds ?? [] });
        }
      }
      if (data.historyId) historyId = data.historyId;
      pageToken = data.nextPageToken ?? null;
    } while (pageToken);
    return { kind: 'changes', added, historyId };
  }

  async labels(): Promise<GmailLabel[]> {
    const data = await this.call((o) => this.api.users.labels.list({ userId: this.userId }, o));
    return (data.labels ?? []).flatMap((l) =>
      l.id ? [{ id: l.id, name: l.name ?? l.id, type: l.type === 'user' ? 'user' : 'system' }] : [],
    );
  }

  /** The label id of each folder role, null when the account has no such label. */
  async folderLabels(): Promise<Record<MailFolderRole, string | null>> {
    const ids = new Set((await this.labels()).map((l) => l.id));
    const pick = (role: MailFolderRole) =>
      ids.has(GMAIL_ROLE_LABELS[role]) ? GMAIL_ROLE_LABELS[role] : null;
    return { inbox: pick('inbox'), sent: pick('sent'), spam: pick('spam'), trash: pick('trash') };
  }

  /** The googleapis client; only read inside `call`, after it is made. */
  private get api(): gmail_v1.Gmail {
    if (!this.loaded) throw new Error('GmailClient: the API is used before it was loaded');
    return this.loaded;
  }

  private async call<T>(request: (options: MethodOptions) => Promise<{ data: T }>): Promise<T> {
    if (!this.loaded) {
      const { gmail } = await loadGmailApi();
      this.loaded ??= gmail({ version: 'v1', rootUrl: this.options.apiUrl, retry: false });
    }
    return callProvider({
      provider: 'Gmail API',
      tokens: this.tokens,
      policy: this.policy,
      classify: classifyGmailError,
      run: async (token) => {
        const options: MethodOptions = {
          rootUrl: this.options.apiUrl,
          retry: false,
          timeout: this.options.timeoutMs ?? 30_000,
          headers: { Authorization: `Bearer ${token}` },
        };
        return (await request(options)).data;
      },
    });
  }
}
