import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, ConfigError } from '../config/env';
import type { Queryable } from '../db/types';
import { SealError, Sealer, generateSecretKey, parseSecretKey } from './sealer';

const CHECK_PLAINTEXT = 'mailyard secret key check v1';

/**
 * The sealing key: SECRET_KEY, or in embedded mode a key generated once into DATA_DIR/secret.key.
 * With DATABASE_URL set, SECRET_KEY is required (replicas must share it).
 */
export function resolveSealer(config: Pick<Config, 'SECRET_KEY' | 'DATABASE_URL' | 'DATA_DIR'>): Sealer {
  if (config.SECRET_KEY) {
    try {
      return new Sealer(parseSecretKey(config.SECRET_KEY));
    } catch (err) {
      throw new ConfigError(
        `Invalid configuration: SECRET_KEY ${(err as Error).message.replace(/^SECRET_KEY /, '')}`,
      );
    }
  }
  if (config.DATABASE_URL)
    throw new ConfigError('Invalid configuration: SECRET_KEY is required when DATABASE_URL is set');
  if (config.DATA_DIR.startsWith('memory://')) return new Sealer(parseSecretKey(generateSecretKey()));
  const file = join(config.DATA_DIR, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(config.DATA_DIR, { recursive: true });
    writeFileSync(file, `${generateSecretKey()}\n`, { mode: 0o600, flag: 'wx' });
  }
  return new Sealer(parseSecretKey(readFileSync(file, 'utf8')));
}

/** Fails startup when the database holds secrets sealed with another key. */
export async function verifySealer(db: Queryable, sealer: Sealer): Promise<void> {
  await db.query('INSERT INTO secret_key_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [
    sealer.seal(CHECK_PLAINTEXT),
  ]);
  const { rows } = await db.query<{ sealed: Uint8Array }>('SELECT sealed FROM secret_key_check WHERE id = 1');
  try {
    if (sealer.openText(rows[0]!.sealed) === CHECK_PLAINTEXT) return;
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
  }
  throw new ConfigError(
    'Invalid configuration: SECRET_KEY does not match the key the stored secrets were sealed with',
  );
}
