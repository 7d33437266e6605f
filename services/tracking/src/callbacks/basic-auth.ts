/**
 * HTTP Basic credentials (RFC 7617) of an Authorization header, for the provider callbacks: the
 * user-id is everything before the first colon of the decoded pair, the password the rest. Null
 * for a missing header, another scheme, or a value that is not base64 of `user:password`.
 */
export interface BasicCredentials {
  username: string;
  password: string;
}

const MAX_HEADER = 1024;

export function basicCredentials(header: string | undefined): BasicCredentials | null {
  if (!header || header.length > MAX_HEADER) return null;
  const m = /^basic[ \t]+([A-Za-z0-9+/=_-]+)[ \t]*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
