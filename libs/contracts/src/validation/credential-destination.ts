/**
 * docs/architecture.md, security 7: a stored credential goes only to the destination it was given for.
 * Changing where it is sent requires it again; an update that moves the destination without
 * the credential is a 400 (the caller's message says which field is missing), never a silent
 * forward of the stored secret to a new host. One rule for every stored credential:
 * - mailer passwords: the destination is host, port, username and TLS mode (MAILER_DESTINATION);
 * - webhook custom headers (tenant webhooks, inbound routes, IMAP mailers' incoming webhooks):
 *   the destination is the URL's scheme, host and port (webhookDestination); the path may change.
 * Nothing needs re-entering when nothing is stored.
 */

export interface CredentialChange<D> {
  /** Where the stored credential is sent now, and where it would be sent after the change. */
  before: D;
  after: D;
  /** A credential is stored (a password, at least one custom header). */
  stored: boolean;
  /** The change gives the credential again. */
  given: boolean;
}

/** Whether `change` must carry the credential again: one is stored, it is not given, and the destination moves. */
export function credentialNeededAgain<D extends Record<string, unknown>>(
  change: CredentialChange<D>,
): boolean {
  if (!change.stored || change.given) return false;
  const keys = new Set([...Object.keys(change.before), ...Object.keys(change.after)]);
  return [...keys].some((k) => change.before[k] !== change.after[k]);
}

/** The fields of a mailer connection that say where its password goes. */
export const MAILER_DESTINATION = ['host', 'port', 'username', 'secure'] as const;

/** `conn`'s destination: only the MAILER_DESTINATION fields. */
export function mailerDestination(
  conn: Partial<Record<(typeof MAILER_DESTINATION)[number], unknown>>,
): Record<string, unknown> {
  return Object.fromEntries(MAILER_DESTINATION.map((f) => [f, conn[f]]));
}

/**
 * Where a webhook URL's headers go: its origin (scheme, host, port; the default port and the
 * host's case normalized). A URL that does not parse, or has no origin, is its own destination.
 */
export function webhookDestination(url: string): { origin: string } {
  try {
    const { origin } = new URL(url);
    return { origin: origin === 'null' ? url : origin };
  } catch {
    return { origin: url };
  }
}
