/**
 * Register/update check of a webhook URL (docs/webhooks.md: "HTTPS, publicly reachable"): https
 * only, then a TCP connection is tried through the platform's guarded connect (IP literals and
 * names that are or resolve to private, loopback, link-local or metadata addresses refused, the
 * checked address is the one connected to). Refusals
 * are 400 (not an https URL) or 422 (cannot be connected to) and never name the resolved
 * address. WEBHOOK_ALLOW_INSECURE=1 allows http:// and private targets (development, tests).
 */
import { WebhookErrorText } from '@mailyard/contracts';
import {
  type GuardOptions,
  type Sealer,
  badRequest,
  guardedConnect,
  isOutboundTargetError,
  unprocessable,
} from '@mailyard/platform';
import type { GatewayConfig } from '../settings';

export interface UrlCheckOptions {
  allowInsecure: boolean;
  guard: GuardOptions;
  timeoutMs: number;
}

/** Throws the 400/422 envelope for a URL that may not be registered; returns the normalized URL. */
export async function checkWebhookUrl(raw: string, opts: UrlCheckOptions): Promise<string> {
  const url = parseWebhookUrl(raw, opts.allowInsecure);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const failure = await tryConnect(url.hostname, port, opts);
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

/** Connects once and closes; resolving and connecting share the one `timeoutMs`. */
function tryConnect(host: string, port: number, opts: UrlCheckOptions): Promise<Failure> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (f: Failure) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(f);
    };
    const timer = setTimeout(() => done('unreachable'), opts.timeoutMs);
    guardedConnect({ ...opts.guard, host, port, timeoutMs: opts.timeoutMs }).then(
      (socket) => {
        socket.destroy();
        done(null);
      },
      (err: unknown) => {
        if (isOutboundTargetError(err) && err.code === 'ETARGET_PRIVATE') return done('private');
        if (isOutboundTargetError(err) && err.code === 'ETARGET_UNRESOLVED') return done('unresolvable');
        done('unreachable');
      },
    );
  });
}

/** The URL check as the gateway's configuration sets it (WEBHOOK_ALLOW_INSECURE, DNS_SERVERS). */
export function urlCheckOptions(config: GatewayConfig): UrlCheckOptions {
  return {
    allowInsecure: config.WEBHOOK_ALLOW_INSECURE,
    guard: { allowPrivate: config.WEBHOOK_ALLOW_INSECURE, dns: config },
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
