import type { SendingMailer } from '@mailyard/contracts';
import type { Queryable, Sealer } from '@mailyard/platform';
import { loadSendingMailer } from '@mailyard/store';

/**
 * Loaded (unsealed) mailers, reused while their version fingerprint (read with the copy, see
 * load-copy) is unchanged: a disabled, deleted, re-keyed or reconfigured mailer is seen by the
 * very next command, and an unchanged one costs no query.
 */
export class MailerCache {
  private readonly entries = new Map<string, { version: string; mailer: SendingMailer | null }>();

  constructor(private readonly maxEntries = 10_000) {}

  async get(
    db: Queryable,
    sealer: Sealer,
    tenantId: string,
    mailerId: string,
    version: string | null,
  ): Promise<SendingMailer | null> {
    if (version === null) return null;
    const key = `${tenantId}/${mailerId}`;
    const hit = this.entries.get(key);
    if (hit && hit.version === version) return hit.mailer;
    const mailer = await loadSendingMailer(db, sealer, tenantId, mailerId);
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { version, mailer });
    return mailer;
  }
}
