/**
 * The server side of a login between POST /v1/oauth/login and GET /v1/oauth/callback: the PKCE
 * verifier (and the new mailer's name), keyed by the state's nonce in the kv store (shared by
 * every gateway replica), sealed, expiring with the state. `take` marks the nonce used first
 * (set-if-absent), so a state is accepted once: a replayed or expired one finds nothing.
 */
import type { Kv, Sealer } from '@mailyard/platform';

export interface PendingLogin {
  verifier: string;
  name?: string;
}

export class PendingLogins {
  constructor(
    private readonly kv: Kv,
    private readonly sealer: Sealer,
    private readonly ttlMs: number,
  ) {}

  async put(nonce: string, login: PendingLogin): Promise<void> {
    const sealed = this.sealer.seal(JSON.stringify(login)).toString('base64');
    await this.kv.set(`oauth:login:${nonce}`, sealed, this.ttlMs);
  }

  /** The login of `nonce`, once; null when already taken, expired or unknown. */
  async take(nonce: string): Promise<PendingLogin | null> {
    const first = await this.kv.set(`oauth:used:${nonce}`, '1', this.ttlMs, { onlyIfAbsent: true });
    if (!first) return null;
    const key = `oauth:login:${nonce}`;
    const sealed = await this.kv.get(key);
    await this.kv.del(key);
    if (!sealed) return null;
    try {
      const v = JSON.parse(this.sealer.openText(Buffer.from(sealed, 'base64'))) as PendingLogin;
      return typeof v.verifier === 'string' ? v : null;
    } catch {
      return null;
    }
  }
}
