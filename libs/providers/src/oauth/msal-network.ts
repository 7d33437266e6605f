/**
 * MSAL's network module (INetworkModule) for one token operation: fetch with a deadline, like
 * MSAL's own client, and it keeps the last answer's status, Retry-After and OAuth error so a
 * failure can be classified (MSAL's errors carry neither the status of every failure nor
 * Retry-After). A non-JSON error body (a proxy's 502 page) becomes an OAuth error object, so MSAL
 * reports it as a server error instead of reading it as a token response.
 */
import type { INetworkModule, NetworkRequestOptions, NetworkResponse } from '@azure/msal-node';
import type { TokenFailure } from './classify-token-error';

export class RecordingNetwork implements INetworkModule {
  /** The last answer (null before any, or after a connection failure). */
  last: TokenFailure | null = null;

  constructor(private readonly timeoutMs: number) {}

  sendGetRequestAsync<T>(url: string, options?: NetworkRequestOptions, timeout?: number) {
    return this.send<T>('GET', url, options, timeout);
  }

  sendPostRequestAsync<T>(url: string, options?: NetworkRequestOptions) {
    return this.send<T>('POST', url, options);
  }

  private async send<T>(
    method: 'GET' | 'POST',
    url: string,
    options?: NetworkRequestOptions,
    timeout?: number,
  ): Promise<NetworkResponse<T>> {
    this.last = null;
    const res = await fetch(url, {
      method,
      headers: options?.headers ?? {},
      ...(method === 'POST' ? { body: options?.body ?? '' } : {}),
      signal: AbortSignal.timeout(Math.min(timeout ?? this.timeoutMs, this.timeoutMs)),
    });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, key) => {
      headers[key] = value;
    });
    const text = await res.text();
    let body: Record<string, unknown>;
    try {
      const parsed = JSON.parse(text) as unknown;
      body = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      body = {};
    }
    if (!res.ok && typeof body.error !== 'string') {
      body = {
        error: res.status === 429 || res.status >= 500 ? 'temporarily_unavailable' : 'invalid_request',
        error_description: `HTTP ${res.status}`,
      };
    }
    this.last = {
      status: res.status,
      error: typeof body.error === 'string' ? body.error : undefined,
      description: typeof body.error_description === 'string' ? body.error_description : undefined,
      retryAfter: headers['retry-after'] ?? null,
    };
    return { headers, body: body as T, status: res.status };
  }
}
