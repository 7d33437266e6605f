/**
 * A failed mail server check (libs/providers credential-check.ts) as the API's 422: a short error
 * per kind, the server's reason in `details`.
 */
import { HttpError } from '@mailyard/platform';
import type { CheckFailure, CheckFailureKind } from '@mailyard/providers';

export function checkFailure(result: CheckFailure, texts: Record<CheckFailureKind, string>): HttpError {
  return new HttpError(422, texts[result.kind], { details: result.reason });
}
