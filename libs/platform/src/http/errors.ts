import type { ErrorEnvelope } from '@mailyard/contracts';

/** A failure the client caused (or may retry); rendered as the spec's error envelope. */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
    readonly details?: string,
    readonly extra?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
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

export const badRequest = (message: string, details?: string) => new HttpError(400, message, details);
export const unauthorized = (message: string) => new HttpError(401, message);
export const notFound = (message: string) => new HttpError(404, message);
export const conflict = (message: string, extra?: Record<string, unknown>) =>
  new HttpError(409, message, undefined, extra);
export const unprocessable = (message: string, details?: string) => new HttpError(422, message, details);
