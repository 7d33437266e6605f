/**
 * Building blocks of the settings schemas: the platform's core (env.ts) and every service's own
 * (services/<name>/src/settings.ts) describe their variables with these, so a value is parsed
 * and reported the same way wherever it is read.
 */
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
export const flag = z
  .enum(['0', '1', 'true', 'false', ''])
  .default('0')
  .transform((v) => v === '1' || v === 'true');
/** A byte size such as `1mb`, `512kb` or `1048576` (1024-based). */
export const byteSize = z
  .string()
  .regex(/^\s*\d+(\.\d+)?\s*(b|kb|mb|gb)?\s*$/i, 'must be a byte size such as 1mb, 512kb or 1048576');
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
