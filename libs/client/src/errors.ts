/**
 * Typed errors of the Mailyard client. Every non-2xx answer becomes a MailyardApiError carrying
 * the spec's envelope `{success:false, error, details?}` verbatim, with a subclass per status so
 * callers can `instanceof` instead of comparing numbers. A request that never got an answer
 * (connection refused/reset, timeout) is a MailyardNetworkError.
 */
import type { ErrorEnvelope } from '@mailyard/contracts';

export class MailyardError extends Error {
  override name = 'MailyardError';
}

/** The spec's envelope plus any other field the answer carried (e.g. `jobId` of a 409). */
export type ApiErrorEnvelope = ErrorEnvelope & Record<string, unknown>;

export class MailyardApiError extends MailyardError {
  override name = 'MailyardApiError';
  constructor(
    readonly status: number,
    /** The spec's error envelope as the server sent it (synthesised when the body was not one). */
    readonly envelope: ApiErrorEnvelope,
    readonly method: string,
    readonly path: string,
    /** Seconds from a Retry-After header, when present. */
    readonly retryAfter?: number,
  ) {
    super(
      `${method} ${path} -> ${status}: ${envelope.error}${envelope.details ? ` (${envelope.details})` : ''}`,
    );
  }
  get error(): string {
    return this.envelope.error;
  }
  get details(): string | undefined {
    return this.envelope.details;
  }
}

export class BadRequestError extends MailyardApiError {
  override name = 'BadRequestError';
}
export class AuthenticationError extends MailyardApiError {
  override name = 'AuthenticationError';
}
/** 403: the API key's scope does not allow the call (docs/api/keys.md "Scopes"). */
export class PermissionError extends MailyardApiError {
  override name = 'PermissionError';
}
export class NotFoundError extends MailyardApiError {
  override name = 'NotFoundError';
}
export class ConflictError extends MailyardApiError {
  override name = 'ConflictError';
}
export class PayloadTooLargeError extends MailyardApiError {
  override name = 'PayloadTooLargeError';
}
export class UnprocessableError extends MailyardApiError {
  override name = 'UnprocessableError';
}
export class RateLimitError extends MailyardApiError {
  override name = 'RateLimitError';
}
export class ServerError extends MailyardApiError {
  override name = 'ServerError';
}

export class MailyardNetworkError extends MailyardError {
  override name = 'MailyardNetworkError';
  constructor(
    readonly method: string,
    readonly path: string,
    override readonly cause: unknown,
  ) {
    super(`${method} ${path}: no answer (${cause instanceof Error ? cause.message : String(cause)})`);
  }
}

const BY_STATUS: Record<number, typeof MailyardApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableError,
  429: RateLimitError,
};

/** The error for an answer: the envelope when the body is one, else the status text. */
export function apiErrorFor(
  status: number,
  body: unknown,
  method: string,
  path: string,
  retryAfter?: number,
): MailyardApiError {
  const b = body as (Partial<ErrorEnvelope> & Record<string, unknown>) | null;
  // Fields beside error/details are kept (a 409 for a history backfill names the active jobId).
  let envelope: ApiErrorEnvelope = { success: false, error: `HTTP ${status}` };
  if (b && typeof b === 'object' && typeof b.error === 'string') {
    const { details, ...rest } = b;
    envelope = {
      ...rest,
      success: false,
      error: b.error,
      ...(typeof details === 'string' ? { details } : {}),
    };
  }
  const Ctor = BY_STATUS[status] ?? (status >= 500 ? ServerError : MailyardApiError);
  return new Ctor(status, envelope, method, path, retryAfter);
}
