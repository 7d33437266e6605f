/**
 * DKIM signing (relaxed/relaxed, rsa-sha256) with nodemailer's signer, for domain mailers: the
 * domain's sealed private key and selector. Parsed keys are cached by PEM hash, so a busy domain
 * does not parse its key per message. A key that cannot sign is an error, never an unsigned send.
 * The message is fed to the signer in slices (slices.ts).
 */
import { type KeyObject, createHash, createPrivateKey } from 'node:crypto';
import DKIM from 'nodemailer/lib/dkim';
import { sliced } from './slices';

export class DkimError extends Error {
  override name = 'DkimError';
}

export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKeyPem: string;
}

const keys = new Map<string, KeyObject>();
const MAX_CACHED_KEYS = 1000;

function keyObject(pem: string): KeyObject {
  const id = createHash('sha256').update(pem).digest('base64');
  let key = keys.get(id);
  if (!key) {
    try {
      key = createPrivateKey(pem);
    } catch (err) {
      throw new DkimError(`DKIM private key cannot be read: ${(err as Error).message}`);
    }
    if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value!);
    keys.set(id, key);
  }
  return key;
}

/** Returns `raw` with a DKIM-Signature header prepended. */
export async function dkimSign(raw: Buffer, key: DkimKey): Promise<Buffer> {
  if (!key.domainName || !key.keySelector || !key.privateKeyPem)
    throw new DkimError('DKIM key, selector or domain missing');
  const signer = new DKIM({
    domainName: key.domainName,
    keySelector: key.keySelector,
    privateKey: keyObject(key.privateKeyPem),
  });
  const chunks: Buffer[] = [];
  const stream = signer.sign(sliced(raw));
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', resolve);
    stream.once('error', reject);
  });
  const signed = Buffer.concat(chunks);
  if (!signed.subarray(0, 16).toString('latin1').startsWith('DKIM-Signature:')) {
    throw new DkimError('DKIM signing failed (the key could not sign)');
  }
  return signed;
}
