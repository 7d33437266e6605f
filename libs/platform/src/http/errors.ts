import type { ServerResponse } from 'node:http';
import type { ErrorEnvelope } from '@mailyard/contracts';

export interface HttpErrorOptions {
  /** `details` of the envelope. */
  details?: string | undefined;
  /** More envelope fields. */
  extra?: Record<string, unknown>;
  /** Response headers (Retry-After and such). */
  headers?: Record<string, string>;
}

/** A failure the client caused (or may retry); rendered as the spec's error envelope. */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly details?: string;
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    readonly status: number,
    message: string,
    opts: HttpErrorOptions = {},
  ) {
    super(message);
    if (opts.details !== undefined) this.details = opts.details;
    if (opts.extra) this.extra = opts.extra;
    if (opts.headers) this.headers = opts.headers;
  }

  toEnvelope(): ErrorEnvelope & Record<string, unknown> {
    return {
      success: false,
      error: this.message,
      ...(this.details ? { details: this.details } : {}),
      ...this.extra,
    };
  }
}

export const badRequest = (message: string, details?: string) => new HttpError(400, message, { details });
export const unauthorized = (message: string) => new HttpError(401, message);
export const notFound = (message: string) => new HttpError(404, message);
export const conflict = (message: string, extra?: Record<string, unknown>) =>
  new HttpError(409, message, extra ? { extra } : {});
export const unprocessable = (message: string, details?: string) => new HttpError(422, message, { details });

/** Answers `httpError` (its headers, then the envelope through `send`) unless already answered. */
export function answerError(
  httpError: HttpError | null,
  res: ServerResponse,
  send: (status: number, body: unknown) => void,
): void {
  if (!httpError || res.headersSent) return;
  for (const [name, value] of Object.entries(httpError.headers ?? {})) res.setHeader(name, value);
  send(httpError.status, httpError.toEnvelope());
}
