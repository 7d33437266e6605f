import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_BYTES = 4;

export class SealError extends Error {
  override name = 'SealError';
}

/** Parses SECRET_KEY: 32 bytes as 64 hex characters or base64/base64url. */
export function parseSecretKey(value: string): Buffer {
  const v = value.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (key.length !== 32) throw new SealError('SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}

export function generateSecretKey(): string {
  return randomBytes(32).toString('hex');
}

/**
 * AES-256-GCM sealing of secrets at rest (mailer passwords, OAuth tokens, DKIM keys).
 * Layout: version(1) | key id(4) | iv(12) | tag(16) | ciphertext. The key id tells a wrong
 * SECRET_KEY apart from tampered data.
 */
export class Sealer {
  private readonly keyId: Buffer;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new SealError('sealing key must be 32 bytes');
    this.keyId = createHash('sha256').update(key).digest().subarray(0, KEY_ID_BYTES);
  }

  seal(plaintext: string | Buffer): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(this.keyId);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), this.keyId, iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer | Uint8Array): Buffer {
    const buf = Buffer.from(sealed);
    if (buf.length < 1 + KEY_ID_BYTES + IV_BYTES + TAG_BYTES || buf[0] !== VERSION)
      throw new SealError('not a sealed value');
    const keyId = buf.subarray(1, 1 + KEY_ID_BYTES);
    if (!keyId.equals(this.keyId)) throw new SealError('sealed with a different SECRET_KEY');
    const iv = buf.subarray(1 + KEY_ID_BYTES, 1 + KEY_ID_BYTES + IV_BYTES);
    const tag = buf.subarray(1 + KEY_ID_BYTES + IV_BYTES, 1 + KEY_ID_BYTES + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(keyId);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([
        decipher.update(buf.subarray(1 + KEY_ID_BYTES + IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new SealError('sealed value failed authentication');
    }
  }

  openText(sealed: Buffer | Uint8Array): string {
    return this.open(sealed).toString('utf8');
  }

  /**
   * A 32-byte key for another purpose (HKDF-SHA256 of SECRET_KEY with `info` naming it), so one
   * secret serves several uses without any of them seeing the sealing key itself.
   */
  deriveKey(info: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), info, 32));
  }
}
