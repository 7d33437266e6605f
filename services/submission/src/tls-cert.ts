/**
 * The submission listener's certificate: SUBMISSION_TLS_CERT/KEY when set; else a self-signed one
 * for SUBMISSION_HOSTNAME made at first start (openssl) and kept in DATA_DIR/submission-tls, so it
 * stays the same across restarts (clients that pin it keep working). `selfSigned` tells the
 * banner to say so.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Certificate {
  key: Buffer;
  cert: Buffer;
  selfSigned: string | null;
}

export async function loadCertificate(
  configured: { key: Buffer; cert: Buffer } | null,
  dataDir: string,
  hostname: string,
): Promise<Certificate> {
  if (configured) return { ...configured, selfSigned: null };
  const dir = join(dataDir, 'submission-tls');
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  try {
    return { key: await readFile(keyPath), cert: await readFile(certPath), selfSigned: certPath };
  } catch {
    // first start: made below
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const cn = hostname.replace(/[^A-Za-z0-9.-]/g, '') || 'localhost';
  const tmpKey = `${keyPath}.${process.pid}.tmp`;
  const tmpCert = `${certPath}.${process.pid}.tmp`;
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '3650',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    `subjectAltName=DNS:${cn}`,
    '-keyout',
    tmpKey,
    '-out',
    tmpCert,
  ]);
  await rename(tmpKey, keyPath);
  await rename(tmpCert, certPath);
  return { key: await readFile(keyPath), cert: await readFile(certPath), selfSigned: certPath };
}
