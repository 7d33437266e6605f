/**
 * Building blocks of the settings schemas: the platform's core (env.ts) and every service's own
 * (services/<name>/src/settings.ts) describe their variables with these, so a value is parsed
 * and reported the same way wherever it is read.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';

export const integer = (message: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ invalid_type_error: message })
    .refine((n) => Number.isInteger(n) && n >= min && n <= max, { message });
export const port = (fallback: number) =>
  integer('must be a port number from 0 to 65535', 0, 65535).default(fallback);
export const optionalUrl = (protocols: string[]) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || protocols.some((p) => v.startsWith(`${p}://`)), {
      message: `must be a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}`,
    });
/** An integer of at least `min` (a lower bound other than 1: milliseconds, bytes). */
export const atLeast = (min: number, fallback: number) =>
  integer(`must be an integer of at least ${min}`, min).default(fallback);
/** A number above 0, fractions allowed (days and such). */
export const positiveNumber = (fallback: number) =>
  z.coerce
    .number({ invalid_type_error: 'must be a positive number' })
    .refine((n) => Number.isFinite(n) && n > 0, { message: 'must be a positive number' })
    .default(fallback);
/** A fraction above 0 and at most 1 (a rate threshold). */
export const fraction = (fallback: number) =>
  z.coerce
    .number({ invalid_type_error: 'must be a number above 0 and at most 1' })
    .refine((n) => Number.isFinite(n) && n > 0 && n <= 1, {
      message: 'must be a number above 0 and at most 1',
    })
    .default(fallback);
const onOff = z.enum(['0', '1', 'true', 'false', '']);
const isOn = (v: string) => v === '1' || v === 'true';
/** A switch that is off unless set to 1 or true. */
export const flag = onOff.default('0').transform(isOn);
/** A switch that is on unless set to 0 or false. */
export const flagOn = onOff.default('1').transform(isOn);
/** The path of a file read at start (a PEM certificate and such); its contents, or an issue naming why not. */
export const fileContents = z.string().transform((path, ctx): Buffer => {
  try {
    return readFileSync(path);
  } catch (err) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    });
    return z.NEVER;
  }
});
/** A byte size such as `1mb`, `512kb` or `1048576` (1024-based). */
export const byteSize = z
  .string()
  .regex(/^\s*\d+(\.\d+)?\s*(b|kb|mb|gb)?\s*$/i, 'must be a byte size such as 1mb, 512kb or 1048576');
/** Milliseconds per unit of a duration setting (`duration`). */
const DURATION_UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A duration written as a number and a unit, `s`, `m`, `h` or `d` (`15s`, `1.5h`, `30d`), read as
 * whole milliseconds of at least 1 s and at most 100 years; anything else (a bare number, another
 * unit, 0) is a settings error at start naming the expected form. `fallback` is written the same way.
 */
export const duration = (fallback: string) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .default(fallback)
    .transform((v, ctx): number => {
      const m = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(v);
      const ms = m
        ? Math.round(Number(m[1]) * DURATION_UNIT_MS[m[2] as keyof typeof DURATION_UNIT_MS])
        : Number.NaN;
      if (!(ms >= 1_000 && ms <= 100 * 365 * 86_400_000)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message: 'must be a duration such as 15s, 30m, 1h or 30d (a number and s, m, h or d; at least 1s)',
        });
        return z.NEVER;
      }
      return ms;
    });
export const positiveInt = (fallback: number) => integer('must be a positive integer', 1).default(fallback);
export const commaList = (message: string, valid: (item: string) => boolean) =>
  z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .refine((items) => items.every(valid), { message });
/** `1.2.3.4`, `1.2.3.4:53`, `::1` or `[::1]:53` (node:dns Resolver#setServers forms). */
export const isDnsServer = (s: string) => {
  const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s) ?? /^([\d.]+)(?::(\d{1,5}))?$/.exec(s);
  if (m) return isIP(m[1]!) !== 0 && (m[2] === undefined || Number(m[2]) <= 65535);
  return isIP(s) === 6;
};
export const hostName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^(?=.{1,253}$)([a-z0-9_]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9_]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
    'must be a host name',
  );

/** A comma-separated list of seconds (numbers >= 0), such as retry delays. */
export const secondsList = (fallback: string) =>
  commaList('must be a comma-separated list of seconds (numbers >= 0)', (s) => /^\d+(\.\d+)?$/.test(s))
    .transform((items) => items.map(Number))
    .default(fallback);

/**
 * A refinement of a settings object: each pair of variables is set together or not at all. The
 * issue names the one missing (`GOOGLE_CLIENT_SECRET must be set together with GOOGLE_CLIENT_ID`).
 */
export const setTogether =
  <K extends string>(pairs: ReadonlyArray<readonly [K, K]>) =>
  (s: Partial<Record<K, unknown>>, ctx: z.RefinementCtx): void => {
    for (const [a, b] of pairs) {
      if (Boolean(s[a]) === Boolean(s[b])) continue;
      const [missing, given] = s[a] ? [b, a] : [a, b];
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: [missing],
        message: `must be set together with ${given}`,
      });
    }
  };

/**
 * The markers of the values the repository's examples put where a secret goes (`.env.example`
 * `change-me-...`, `k8s/base/secrets.env` `REPLACE_ME_...`, the docs' `<key>`). A deployment that
 * kept one would run with a key anyone can read in this repository, so every secret setting
 * refuses them at start (services/gateway/src/settings.test.ts checks every documented value).
 */
const PLACEHOLDER = /replace[\s_-]?me|change[\s_-]?me|^<.*>$/i;

/** True for a value that still holds an example's placeholder (see PLACEHOLDER). */
export const isPlaceholder = (value: string) => PLACEHOLDER.test(value);

/** A secret setting: optional; a value of the examples is refused. */
export const secretValue = (schema: z.ZodString = z.string()) =>
  schema
    .refine((v) => !isPlaceholder(v), {
      message: 'is a placeholder from the examples: set a random value of your own',
    })
    .optional();

/** Express's `trust proxy` forms: whose X-Forwarded-For gives a request's client address. */
export type TrustProxy = boolean | number | string[];

const NAMED_PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * A trust-proxy setting (TRACKING_TRUST_PROXY, TRUST_PROXY): `false` (default: the socket
 * address), `true` (the left-most address: only behind a proxy that overwrites the header), a
 * hop count (`1`), or a comma-separated list of addresses, CIDR ranges or
 * `loopback`/`linklocal`/`uniquelocal`.
 */
export const trustProxy = z
  .string()
  .trim()
  .default('false')
  .transform((v, ctx): TrustProxy => {
    if (v === '' || v === 'false' || v === '0') return false;
    if (v === 'true') return true;
    if (/^\d+$/.test(v)) return Number(v);
    const items = v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const ok = items.every((s) => NAMED_PROXY_RANGES.has(s) || isIP(s.split('/')[0]!) !== 0);
    if (!ok) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message:
          'must be false, true, a hop count, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal',
      });
      return z.NEVER;
    }
    return items;
  });
