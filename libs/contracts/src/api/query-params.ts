/**
 * The query parameters list routes share: single-string params where an empty one is absent,
 * time bounds (a bare date is that whole UTC day) and `pageSize`, each with the error message
 * the API gives for it, a domain filter, and the check that a start does not come after its
 * end. One definition, so every list route answers a bad value the same way.
 */
import { z } from 'zod';
import { ErrorText } from '../errors';
import { normalizeDomain } from '../validation/address';
import { fieldPath } from '../validation/messages';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './common';

/** A time bound: an RFC 3339 instant, compared inclusively unless `exclusive`. */
export interface TimeBound {
  at: string;
  exclusive: boolean;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2})))?$/;

/**
 * Parses `YYYY-MM-DD` or an RFC 3339 date-time. A bare date is that UTC day: as a start its
 * first instant, as an end the whole day (exclusive bound at the next midnight).
 */
export function parseTimeBound(value: string, edge: 'start' | 'end'): TimeBound | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return null;
  if (m[4] === undefined) {
    if (edge === 'start') return { at: day.toISOString(), exclusive: false };
    return { at: new Date(day.getTime() + 86_400_000).toISOString(), exclusive: true };
  }
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (h > 23 || mi > 59 || s > 60 || (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)))
    return null;
  if (Number.isNaN(Date.parse(value.toUpperCase()))) return null;
  // The text goes to PostgreSQL as is, keeping sub-millisecond precision.
  return { at: value.toUpperCase(), exclusive: false };
}

/** Query parameters are single strings; an empty one is the same as an absent one. */
export const queryParam = <T extends z.ZodTypeAny>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()).pipe(schema.optional());

/** A `start`/`end` time bound; the message names the parameter it was given in. */
export const timeBoundParam = (edge: 'start' | 'end') =>
  z.string().transform((v, ctx) => {
    const bound = parseTimeBound(v, edge);
    if (bound) return bound;
    ctx.addIssue({
      code: 'custom',
      message: `${fieldPath(ctx.path)} must be an RFC 3339 date-time or a YYYY-MM-DD date`,
    });
    return z.NEVER;
  });

/** `pageSize`: 1..PAGE_SIZE_MAX, PAGE_SIZE_DEFAULT when absent. */
export const pageSizeParam = () =>
  queryParam(
    z.coerce
      .number({ invalid_type_error: ErrorText.invalidPageSize })
      .int(ErrorText.invalidPageSize)
      .min(1, ErrorText.invalidPageSize)
      .max(PAGE_SIZE_MAX, ErrorText.invalidPageSize),
  ).transform((v) => v ?? PAGE_SIZE_DEFAULT);

/** A domain filter (IDNA ok): its ASCII form, lowercase. */
export const domainParam = () =>
  z.string().transform((v, ctx) => {
    const d = normalizeDomain(v);
    if (d) return d.toLowerCase();
    ctx.addIssue({ code: 'custom', message: ErrorText.invalidDomain });
    return z.NEVER;
  });

/**
 * Adds `<startName> must not be after <endName>` when both bounds are given and the start lies
 * after the end. With `emptyIsAfter`, a start at an exclusive end (a bare end date's next
 * midnight) counts as after too: the range would be empty (stats); without it such a range is
 * allowed and simply matches nothing (logs, audit).
 */
export function checkTimeRange(
  ctx: z.RefinementCtx,
  start: TimeBound | undefined,
  end: TimeBound | undefined,
  names: { start: string; end: string; emptyIsAfter?: boolean },
): void {
  if (!start || !end) return;
  const [s, e] = [Date.parse(start.at), Date.parse(end.at)];
  if (names.emptyIsAfter && end.exclusive ? s >= e : s > e)
    ctx.addIssue({ code: 'custom', message: `${names.start} must not be after ${names.end}` });
}
