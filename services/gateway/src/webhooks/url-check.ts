/**
 * Register/update check of a webhook URL (SPEC.md: "HTTPS, publicly reachable"): https only,
 * then the host is resolved through the pinned lookup (private, loopback, link-local and
 * metadata addresses refused) and a TCP connection to the checked address is tried. Refusals
 * are 400 (not an https URL) or 422 (cannot be connected to) and never name the resolved
 * address. WEBHOOK_ALLOW_INSECURE=1 allows http:// and private targets (development, tests).
 */
import { connect } from 'node:net';
import { WebhookErrorText } from '@mailyard/contracts';
import {
  type PinnedLookup,
  type Sealer,
  badRequest,
  isPrivateTargetError,
  isUnresolvedTargetError,
  pinnedLookup,
  refuseLiteralHost,
  unprocessable,
} from '@mailyard/platform';
import type { GatewayConfig } from '../settings';

export interface UrlCheckOptions {
  allowInsecure: boolean;
  lookup: PinnedLookup;
  timeoutMs: number;
}

/** Throws the 400/422 envelope for a URL that may not be registered; returns the normalized URL. */
export async function checkWebhookUrl(raw: string, opts: UrlCheckOptions): Promise<string> {
  const url = parseWebhookUrl(raw, opts.allowInsecure);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const failure = refuseLiteralHost(host, { allowPrivate: opts.allowInsecure })
    ? 'private'
    : await tryConnect(host, port, opts);
  if (failure === 'private') throw unprocessable(WebhookErrorText.webhookUrlPrivate);
  if (failure === 'unresolvable') throw unprocessable(WebhookErrorText.webhookUrlUnresolvable);
  if (failure === 'unreachable') throw unprocessable(WebhookErrorText.webhookUrlUnreachable);
  return url.toString();
}

export function parseWebhookUrl(raw: string, allowInsecure: boolean): URL {
  const invalid = allowInsecure
    ? WebhookErrorText.webhookUrlInsecureInvalid
    : WebhookErrorText.webhookUrlInvalid;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest(invalid);
  }
  const ok = url.protocol === 'https:' || (allowInsecure && url.protocol === 'http:');
  if (!ok || !url.hostname || url.username || url.password) throw badRequest(invalid);
  return url;
}

type Failure = 'private' | 'unresolvable' | 'unreachable' | null;

function tryConnect(host: string, port: number, opts: UrlCheckOptions): Promise<Failure> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, lookup: opts.lookup });
    const done = (f: Failure) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(f);
    };
    const timer = setTimeout(() => done('unreachable'), opts.timeoutMs);
    socket.once('connect', () => done(null));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (isPrivateTargetError(err)) return done('private');
      if (isUnresolvedTargetError(err)) return done('unresolvable');
      done('unreachable');
    });
  });
}

/** The URL check as the gateway's configuration sets it (WEBHOOK_ALLOW_INSECURE, DNS_SERVERS). */
export function urlCheckOptions(config: GatewayConfig): UrlCheckOptions {
  return {
    allowInsecure: config.WEBHOOK_ALLOW_INSECURE,
    lookup: pinnedLookup({ allowPrivate: config.WEBHOOK_ALLOW_INSECURE, dns: config }),
    timeoutMs: config.WEBHOOK_CONNECT_TIMEOUT_MS,
  };
}

/** Custom header names (returned as `headers_present`) and their values sealed as one blob. */
export function sealHeaders(
  sealer: Sealer,
  headers: Record<string, string>,
): { names: string[]; sealed: Buffer | null } {
  const names = Object.keys(headers);
  return { names, sealed: names.length > 0 ? sealer.seal(JSON.stringify(headers)) : null };
}
