/**
 * Applies a send's tracking settings to one rendered copy, before MIME building (consumer.ts):
 * - `settings.open_tracking.enable`: a 1x1 pixel in the HTML part (TRACKING_BASE_URL/o/<token>);
 * - `settings.click_tracking.enable`: links in the HTML and text parts wrapped as
 *   TRACKING_BASE_URL/c/<token>, the token signing the exact original URL;
 * - either one: `List-Unsubscribe` (the tracking service's one-click URL and a mailto) and
 *   `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058). The mailto is the signed
 *   `unsubscribe+<log_id>.<tag>@<bounce domain>` (libs/platform return-path.ts) that the inbound
 *   service accepts and acts on like the one-click POST.
 * Tracking is off unless the send enables it: then the copy is returned untouched.
 *
 * Tokens (libs/platform link-token) name the copy's recipient. With tracking on, planCopies
 * (libs/contracts) gives every recipient a copy of its own, so opens, clicks and unsubscribes
 * are attributed to the person who got those bytes (docs/tracking.md); the first `to` row (else
 * the first row) is taken only for copies planned before that rule (several recipients).
 */
import type { StoredSendRequest } from '@mailyard/contracts';
import {
  type Sealer,
  TrackingPath,
  linkTokenKey,
  returnPathKey,
  signLinkToken,
  unsubscribeAddress,
} from '@mailyard/platform';
import type { RenderedCopy } from './render';
import { rewriteHtml, rewriteText } from './tracking-rewrite';

export interface TrackingTarget {
  tenantId: string;
  refId: string;
  /** The copy's recipients (email_logs rows): the first `to` row is the one tracked. */
  recipients: ReadonlyArray<{ logId: string; email: string; type: string }>;
}

export interface TrackedCopy {
  rendered: RenderedCopy;
  /** Headers to add to the message (empty when tracking is off). */
  headers: Record<string, string>;
}

const keys = new WeakMap<Sealer, { link: Buffer; returnPath: Buffer }>();
/** The keys derived from SECRET_KEY, once per sealer. */
export function keysOf(sealer: Sealer): { link: Buffer; returnPath: Buffer } {
  let k = keys.get(sealer);
  if (!k) {
    k = { link: linkTokenKey(sealer), returnPath: returnPathKey(sealer) };
    keys.set(sealer, k);
  }
  return k;
}

export function trackCopy(
  request: Pick<StoredSendRequest, 'settings'>,
  rendered: RenderedCopy,
  target: TrackingTarget,
  opts: { baseUrl: string; bounceDomain: string; sealer: Sealer },
): TrackedCopy {
  const open = request.settings?.open_tracking?.enable === true;
  const click = request.settings?.click_tracking?.enable === true;
  const primary = target.recipients.find((r) => r.type === 'to') ?? target.recipients[0];
  if ((!open && !click) || !primary) return { rendered, headers: {} };
  const { link: key, returnPath } = keysOf(opts.sealer);
  const claims = {
    tenantId: target.tenantId,
    refId: target.refId,
    logId: primary.logId,
    email: primary.email,
  };
  const url = (path: string) => `${opts.baseUrl}${path}`;
  const clickUrl = (original: string) =>
    url(TrackingPath.click(signLinkToken(key, { ...claims, kind: 'click', url: original })));
  const out: RenderedCopy = { ...rendered };
  if (rendered.html !== undefined) {
    out.html = rewriteHtml(rendered.html, {
      ...(click ? { clickUrl } : {}),
      ...(open ? { pixelUrl: url(TrackingPath.open(signLinkToken(key, { ...claims, kind: 'open' }))) } : {}),
    });
  }
  if (click && rendered.text !== undefined) out.text = rewriteText(rendered.text, clickUrl);
  const unsubscribe = signLinkToken(key, { ...claims, kind: 'unsubscribe' });
  return {
    rendered: out,
    headers: {
      'List-Unsubscribe': `<${url(TrackingPath.unsubscribe(unsubscribe))}>, <mailto:${unsubscribeAddress(returnPath, primary.logId, opts.bounceDomain)}?subject=unsubscribe>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}
