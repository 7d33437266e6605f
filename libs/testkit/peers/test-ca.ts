/**
 * The test certificate authority the TLS test peers (Dovecot, the hostile IMAP server) serve
 * certificates from. test-ca.sh creates it once at a fixed path; the test process trusts it
 * through NODE_EXTRA_CA_CERTS, which Node reads only at start (scripts/test.sh exports it).
 * A peer on a loopback alias of its own (127.x.y.z) serves a leaf certificate for that address,
 * signed by the CA, so the client checks the certificate against the address it dialled.
 */
import { execFile } from 'node:child_process';
import { realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../process';

const run = promisify(execFile);

/** Where scripts/test.sh creates the test certificate (and exports NODE_EXTRA_CA_CERTS to). */
export const TEST_CA_DIR = process.env.TEST_CA_DIR ?? join(REPO_ROOT, '.tmp', 'test-ca');
export const TEST_CA_CERT = join(TEST_CA_DIR, 'cert.pem');
export const TEST_CA_KEY = join(TEST_CA_DIR, 'key.pem');

/** Creates the test certificate when missing (same script as scripts/test.sh); returns its path. */
export async function ensureTestCa(): Promise<string> {
  await run('bash', [join(__dirname, 'test-ca.sh'), TEST_CA_DIR]);
  return TEST_CA_CERT;
}

/** ensureTestCa, and fails fast when this process does not trust it (`peer` names the caller). */
export async function trustedTestCa(peer: string): Promise<string> {
  const caPath = await ensureTestCa();
  const trusted = process.env.NODE_EXTRA_CA_CERTS;
  if (!trusted || realpathSync(resolve(trusted)) !== realpathSync(caPath)) {
    throw new Error(
      `${peer}: this process must trust ${caPath}; start jest with NODE_EXTRA_CA_CERTS=${caPath} (scripts/test.sh does)`,
    );
  }
  return caPath;
}

/** A key and certificate for `ip` signed by the test CA (which is its own CA, CA:TRUE), in `dir`. */
export async function leafCertificate(dir: string, ip: string): Promise<{ cert: string; key: string }> {
  const key = join(dir, 'leaf.key');
  const csr = join(dir, 'leaf.csr');
  const cert = join(dir, 'leaf.pem');
  const ext = join(dir, 'leaf.ext');
  writeFileSync(ext, `subjectAltName=IP:${ip}\nbasicConstraints=CA:FALSE\n`);
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    `/CN=${ip}`,
    '-keyout',
    key,
    '-out',
    csr,
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    TEST_CA_CERT,
    '-CAkey',
    TEST_CA_KEY,
    '-set_serial',
    String(Date.now()),
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    cert,
  ]);
  return { cert, key };
}
