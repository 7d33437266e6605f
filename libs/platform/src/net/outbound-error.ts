/**
 * Why an outbound connection to a user-supplied target was refused or failed. The message names
 * the host (as the user gave it) and never the address it resolved to: a refusal must not map
 * internal names for a tenant (docs/architecture.md "Outbound connections").
 *
 * - `ETARGET_PRIVATE`: the host is, or resolves to, an address that is not public.
 * - `ETARGET_UNRESOLVED`: the host has no address (NXDOMAIN, no A/AAAA, or no DNS answer:
 *   `temporary` is true when the DNS server did not answer, so a later try may succeed).
 * - `ETARGET_CONNECT`: resolving and checking passed, the connection itself failed;
 *   `cause` holds the system error code (ECONNREFUSED, ETIMEDOUT, ...) in `causeCode`.
 */
export type OutboundTargetErrorCode = 'ETARGET_PRIVATE' | 'ETARGET_UNRESOLVED' | 'ETARGET_CONNECT';

export class OutboundTargetError extends Error {
  override name = 'OutboundTargetError';

  constructor(
    readonly code: OutboundTargetErrorCode,
    message: string,
    readonly host: string,
    readonly options: { temporary?: boolean; causeCode?: string } = {},
  ) {
    super(message);
  }

  /** True when trying again later may succeed (DNS gave no answer, or the connection failed). */
  get temporary(): boolean {
    return this.options.temporary ?? this.code === 'ETARGET_CONNECT';
  }

  /** The system error code behind an ETARGET_CONNECT (ECONNREFUSED, ETIMEDOUT, ...). */
  get causeCode(): string | undefined {
    return this.options.causeCode;
  }

  static private(host: string): OutboundTargetError {
    return new OutboundTargetError(
      'ETARGET_PRIVATE',
      `${host} is not allowed: it is or resolves to a private, loopback, link-local or reserved address`,
      host,
    );
  }

  static unresolved(host: string, why: string, temporary: boolean): OutboundTargetError {
    return new OutboundTargetError('ETARGET_UNRESOLVED', `${host} does not resolve: ${why}`, host, {
      temporary,
    });
  }
}

export function isOutboundTargetError(err: unknown): err is OutboundTargetError {
  return err instanceof OutboundTargetError;
}
