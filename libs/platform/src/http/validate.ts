import { ErrorText } from '@mailyard/contracts';
import type { ZodType, ZodTypeDef } from 'zod';
import { HttpError } from './errors';

/** Parses `input` with a contracts schema; the first issue becomes a 400 envelope. */
export function parseOrThrow<T>(schema: ZodType<T, ZodTypeDef, unknown>, input: unknown, status = 400): T {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new HttpError(status, ErrorText.invalidRequest);
  const path = issue.path.join('.');
  // Messages written in the schema stand alone; zod's generic ones get the field name.
  const generic = issue.code === 'invalid_type' && issue.message.startsWith('Expected');
  const message =
    generic || issue.message === 'Required' ? `${path || 'body'}: ${issue.message}` : issue.message;
  const details =
    result.error.issues.length > 1
      ? `${result.error.issues.length} problems; first at ${path || 'body'}`
      : undefined;
  throw new HttpError(status, message, { details });
}
