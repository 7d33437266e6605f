import type { ZodErrorMap, z } from 'zod';
import { ErrorText } from '../errors';

/** `to.1.email` as a reader writes it: `to[1].email`; the whole body is `body`. */
export function fieldPath(path: ReadonlyArray<string | number>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${p}` : p;
  return out || 'body';
}

const ARTICLE: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
};

/**
 * Parse-time error map that names the field in zod's generic messages: `to[0].email is
 * required`, `from must be an object`, `attachments[1].disposition must be one of attachment,
 * inline`. Messages written in a schema are kept as they are.
 */
export const fieldErrorMap: ZodErrorMap = (issue, ctx) => {
  const field = fieldPath(issue.path);
  const generic =
    ctx.defaultError === 'Required' ||
    ctx.defaultError.startsWith('Expected') ||
    ctx.defaultError.startsWith('Invalid');
  if (!generic) return { message: ctx.defaultError };
  switch (issue.code) {
    case 'invalid_type':
      return {
        message:
          issue.received === 'undefined'
            ? `${field} is required`
            : `${field} must be ${ARTICLE[issue.expected] ?? issue.expected}`,
      };
    case 'invalid_enum_value':
      return { message: `${field} must be one of ${issue.options.join(', ')}` };
    default:
      return { message: `${field} is invalid` };
  }
};

/** Parses `input` with field-naming messages; the first problem's message wins. */
export function parseWithFieldMessages<T extends z.ZodTypeAny>(
  schema: T,
  input: unknown,
): { success: true; data: z.output<T> } | { success: false; error: string } {
  const r = schema.safeParse(input ?? {}, { errorMap: fieldErrorMap });
  return r.success
    ? { success: true, data: r.data }
    : { success: false, error: r.error.issues[0]?.message ?? ErrorText.invalidRequest };
}
