import { randomBytes } from 'node:crypto';

/**
 * A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. Receivers pass it
 * as is to the Standard Webhooks libraries; the dispatcher signs with the decoded bytes.
 */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
