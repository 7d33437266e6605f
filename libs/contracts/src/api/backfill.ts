/**
 * IMAP history backfill (docs/api/backfill.md, docs/backfill.md).
 * The start request is validated here; the clamp of `count` to the server maximum and the
 * one-year default window of a participant import (one calendar year before now, the API
 * contract's rule, docs/api/backfill.md) are applied by `planBackfill` so the gateway and the tests share one
 * reading of the rules. Window precision is whole seconds: a fraction in a timestamp is dropped
 * (truncated, never rounded up), not refused.
 */
import { z } from 'zod';
import { parseAddress } from '../validation/address';

export const BACKFILL_STATUSES = ['pending', 'processing', 'done', 'failed', 'cancelled'] as const;
export type BackfillStatus = (typeof BACKFILL_STATUSES)[number];
export const BACKFILL_ACTIVE_STATUSES: readonly BackfillStatus[] = ['pending', 'processing'];

export const BackfillErrorText = {
  active: 'active history backfill already exists',
  jobNotFound: 'History backfill job not found',
  mailerNotFound: 'Mailer not found',
  sendOnly: 'Mailer is send-only: history backfill needs an IMAP-capable mailer',
  noWebhook: 'Mailer has no incoming webhook: register one on the mailer before a history backfill',
  noCredentials: 'Mailer has no working IMAP credentials',
  mailerInactive: 'Mailer is not active',
  finished: 'History backfill job already finished',
  participant: 'participant must be one bare email address',
  windowStart: 'window_start must be an RFC 3339 timestamp',
  windowEnd: 'window_end must be an RFC 3339 timestamp',
  windowOrder: 'window_start must be before window_end',
  defaultWindowOrder:
    'window_end is more than a year ago: window_start defaults to one year before now, give window_start',
  count: 'count must be a non-negative integer',
  folders: 'folders must be an object of booleans: inbox, sent, spam, trash',
  fullImportNeedsBound: 'a full import needs window_start or count',
} as const;

/** RFC 3339 date-time: `2026-01-02T03:04:05Z`, `...+02:00`, `...05.123456Z` (any fraction). */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The instant of an RFC 3339 timestamp to the whole second (a fraction is dropped:
 * `05.999Z` is `05Z`), or null when it is not one.
 */
export function parseWholeSecond(value: string): Date | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m;
  if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  // The fraction is dropped from the text: offsets are whole minutes, so this is the written
  // second whatever the offset, and Date.parse never sees more digits than it reads.
  const t = Date.parse(value.replace(/\.\d+/, ''));
  if (Number.isNaN(t)) return null;
  // Reject dates that roll over (2026-02-31).
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (day.getUTCDate() !== Number(d)) return null;
  return new Date(t);
}

const timestamp = (message: string) =>
  z.string({ invalid_type_error: message }).refine((v) => parseWholeSecond(v) !== null, message);

export const BackfillFoldersSchema = z
  .object(
    {
      inbox: z.boolean({ invalid_type_error: BackfillErrorText.folders }).optional(),
      sent: z.boolean({ invalid_type_error: BackfillErrorText.folders }).optional(),
      spam: z.boolean({ invalid_type_error: BackfillErrorText.folders }).optional(),
      trash: z.boolean({ invalid_type_error: BackfillErrorText.folders }).optional(),
    },
    { invalid_type_error: BackfillErrorText.folders },
  )
  .strict(BackfillErrorText.folders);

export const StartBackfillSchema = z
  .object({
    participant: z
      .string({ invalid_type_error: BackfillErrorText.participant })
      .refine((v) => parseAddress(v) !== null, BackfillErrorText.participant)
      .optional(),
    window_start: timestamp(BackfillErrorText.windowStart).optional(),
    window_end: timestamp(BackfillErrorText.windowEnd).optional(),
    count: z
      .number({ invalid_type_error: BackfillErrorText.count })
      .int(BackfillErrorText.count)
      .min(0, BackfillErrorText.count)
      .optional(),
    folders: BackfillFoldersSchema.optional(),
  })
  .passthrough();
export type StartBackfillRequest = z.infer<typeof StartBackfillSchema>;

/** Which folders a job walks. INBOX is included unless `inbox: false`; others only when true. */
export interface BackfillFolders {
  inbox: boolean;
  sent: boolean;
  spam: boolean;
  trash: boolean;
}

export interface BackfillPlan {
  participant: string | null;
  windowStart: Date | null;
  windowEnd: Date;
  /** 0 = uncapped. */
  count: number;
  folders: BackfillFolders;
}

export type PlanResult = { ok: true; plan: BackfillPlan } | { ok: false; error: string };

/** One calendar year before `t` (29 February goes to 1 March). */
function yearBefore(t: Date): Date {
  const d = new Date(t.getTime());
  d.setUTCFullYear(d.getUTCFullYear() - 1);
  return d;
}

/** Applies the start rules to a schema-valid request at `now` (whole seconds). */
export function planBackfill(req: StartBackfillRequest, now: Date, maxCount: number): PlanResult {
  const nowS = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const participant = req.participant ? parseAddress(req.participant)!.email.toLowerCase() : null;
  const windowEnd = req.window_end ? parseWholeSecond(req.window_end)! : nowS;
  let windowStart = req.window_start ? parseWholeSecond(req.window_start)! : null;
  const count = Math.min(req.count ?? 0, maxCount);
  if (!participant && !windowStart && count === 0)
    return { ok: false, error: BackfillErrorText.fullImportNeedsBound };
  if (participant && !windowStart) {
    windowStart = yearBefore(nowS);
    if (windowStart.getTime() >= windowEnd.getTime())
      return { ok: false, error: BackfillErrorText.defaultWindowOrder };
  }
  if (windowStart && windowStart.getTime() >= windowEnd.getTime())
    return { ok: false, error: BackfillErrorText.windowOrder };
  const f = req.folders ?? {};
  return {
    ok: true,
    plan: {
      participant,
      windowStart,
      windowEnd,
      count,
      folders: {
        inbox: f.inbox !== false,
        sent: f.sent === true,
        spam: f.spam === true,
        trash: f.trash === true,
      },
    },
  };
}

export interface BackfillStatusResponse {
  success: true;
  jobId: string;
  status: BackfillStatus;
  processed: number;
  target: number;
  percent: number;
  startedAt: string;
  endedAt: string;
  /** Only on a `failed` job: why it failed (issue 11; the spec's fields are unchanged otherwise). */
  failedReason?: string;
}

/** 200 of POST /v1/imap/{mailerID}/history (a 409 carries the active `jobId` beside the error). */
export interface StartBackfillResponse {
  success: true;
  jobId: string;
}

/** 200 of POST /v1/imap/{mailerID}/history/{jobId}/abort. */
export interface AbortBackfillResponse {
  success: true;
  jobId: string;
  status: 'cancelled';
}
