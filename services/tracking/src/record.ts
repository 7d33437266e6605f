/**
 * Turns a verified tracking hit into the spec event (docs/events.md "The event object") and records it
 * through libs/store recordEmailEvents (event row, log status forward only, outbox), filling
 * `details.tracking` from the request: time, client IP (per TRACKING_TRUST_PROXY), User-Agent
 * and what it says (user-agent.ts), the clicked URL, and geolocation (geoip.ts).
 */
import {
  type EmailEvent,
  type EmailEventType,
  type Tracking,
  emptyTracking,
  recipientEvent,
} from '@mailyard/contracts';
import { type Db, type LinkClaims, type Queryable, currentTrace } from '@mailyard/platform';
import { type TrackedRecipient, findTrackedRecipient, recordEmailEventsIn } from '@mailyard/store';
import type { GeoLookup } from './geoip';
import { MAX_UA_LENGTH, parseUserAgent } from './user-agent';

export interface Hit {
  ip: string;
  userAgent: string | undefined;
  at: Date;
}

export interface Recorder {
  db: Db;
  geo: GeoLookup;
  /** Called after events were committed (wakes the outbox relay). */
  afterCommit: () => void;
}

export function trackingDetails(hit: Hit, geo: GeoLookup, url = ''): Tracking {
  const userAgent = (hit.userAgent ?? '').slice(0, MAX_UA_LENGTH);
  return {
    ...emptyTracking(),
    time: hit.at.toISOString(),
    ip: hit.ip,
    user_agent: userAgent,
    ...parseUserAgent(userAgent),
    url,
    ...geo(hit.ip),
  };
}

export function buildTrackingEvent(
  event: EmailEventType,
  r: TrackedRecipient,
  tracking: Tracking,
): EmailEvent {
  return recipientEvent(event, r, { tracking });
}

/**
 * Records `event` for the recipient the token names, inside `tx`; false when the send or its log
 * row no longer exists (or belongs to another tenant), in which case nothing is recorded.
 */
export async function recordHitIn(
  tx: Queryable,
  rec: Pick<Recorder, 'geo'>,
  claims: LinkClaims,
  event: EmailEventType,
  hit: Hit,
): Promise<boolean> {
  const recipient = await findTrackedRecipient(tx, claims.tenantId, claims.refId, claims.logId);
  if (!recipient) return false;
  const tracking = trackingDetails(hit, rec.geo, event === 'MAIL_CLICKED' ? (claims.url ?? '') : '');
  await recordEmailEventsIn(tx, [
    {
      tenantId: claims.tenantId,
      copyId: recipient.copyId,
      recipients: [{ logId: recipient.logId, email: recipient.email }],
      event: buildTrackingEvent(event, recipient, tracking),
      traceparent: currentTrace()?.traceparent,
    },
  ]);
  return true;
}

/** recordHitIn in a transaction of its own, then wakes the relay. */
export async function recordHit(
  rec: Recorder,
  claims: LinkClaims,
  event: EmailEventType,
  hit: Hit,
): Promise<boolean> {
  const recorded = await rec.db.transaction((tx) => recordHitIn(tx, rec, claims, event, hit));
  if (recorded) rec.afterCommit();
  return recorded;
}
