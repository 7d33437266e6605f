import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signature (https://www.standardwebhooks.com): `v1,` + base64 HMAC-SHA256
 * over `${msgId}.${timestamp}.${body}`, keyed with the base64-decoded part of `whsec_<base64>`.
 */
export function signWebhook(secret: string, msgId: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${msgId}.${timestampS}.${body}`).digest('base64')}`;
}
