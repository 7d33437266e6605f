/**
 * Message authentication of received mail, on the production path: the MX service (in this
 * process) evaluates SPF, DKIM and DMARC with mailauth against the DNS in DNS_SERVERS, here a real
 * dnsmasq serving a test domain's records (DKIM key, SPF `ip4:127.0.0.1 -all`, DMARC p=reject),
 * and the verdict arrives first in `details.headers['Authentication-Results']` of the posted
 * INCOMING_EMAIL. Messages are DKIM-signed by python3-dkim (dkimpy), an independent signer.
 */
import { spawn } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@mailyard/testkit/eventually';
import { dkimKeyPair } from '@mailyard/testkit/fixtures';
import { type Dnsmasq, startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import { type InboundHarness, startInbound } from './support/inbound';

jest.setTimeout(120_000);

const SENDER = 'auth-sender.test';
const DOMAIN = 'inbound.example.com';
const key = dkimKeyPair();
const tmp = mkdtempSync(join(tmpdir(), 'inbound-auth-'));
let dns: Dnsmasq;
let h: InboundHarness;

beforeAll(async () => {
  dns = await startDnsmasq({
    txt: [
      { name: `s1._domainkey.${SENDER}`, value: key.txt },
      { name: SENDER, value: 'v=spf1 ip4:127.0.0.1 -all' },
      { name: `_dmarc.${SENDER}`, value: 'v=DMARC1; p=reject' },
    ],
  });
  h = await startInbound({
    env: { DNS_SERVERS: dns.server, INBOUND_HOSTNAME: 'mx.mailyard.test' },
    domains: [{ domain: DOMAIN, wildcard: true }],
  });
});

afterAll(async () => {
  await h?.stop();
  await dns?.stop();
});

/** The DKIM-Signature header dkimpy makes for `message` (selector s1, d=auth-sender.test). */
function dkimpySign(message: string): Promise<string> {
  const pkcs1 = createPrivateKey(key.privateKeyPem).export({ type: 'pkcs1', format: 'pem' }).toString();
  const script = [
    'import sys, dkim',
    'msg = sys.stdin.buffer.read()',
    `sig = dkim.sign(msg, b's1', b'${SENDER}', open(sys.argv[1], 'rb').read(), include_headers=[b'from', b'to', b'subject', b'date', b'message-id'])`,
    'sys.stdout.buffer.write(sig)',
  ].join('\n');
  const keyFile = join(tmp, 'key.pem');
  writeFileSync(keyFile, pkcs1, { mode: 0o600 });
  return new Promise((resolve, reject) => {
    const p = spawn('/usr/bin/python3', ['-c', script, keyFile]);
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`dkimpy failed: ${err}`))));
    p.stdin.end(message);
  });
}

function message(subject: string, body: string, extraHeaders = ''): string {
  return (
    `${extraHeaders}From: Alice <alice@${SENDER}>\r\nTo: desk@${DOMAIN}\r\nSubject: ${subject}\r\n` +
    `Date: Thu, 26 Nov 2026 10:00:00 +0000\r\nMessage-ID: <${subject.replace(/\W/g, '')}@${SENDER}>\r\n` +
    `\r\n${body}`
  );
}

/** Sends `raw` from `ip` (a loopback address) as alice@auth-sender.test; resolves with its Authentication-Results. */
async function receive(raw: string, recipient: string, ip = '127.0.0.1'): Promise<string[]> {
  const file = join(tmp, `${recipient}.eml`);
  writeFileSync(file, raw.replace(/\r\n$/, '')); // swaks ends DATA with its own CRLF
  const out = await h.swaks([
    '--to',
    `${recipient}@${DOMAIN}`,
    '--from',
    `alice@${SENDER}`,
    '--ehlo',
    `client.${SENDER}`,
    '--local-interface',
    ip,
    '--data',
    `@${file}`,
  ]);
  expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
  const posted = await eventually(
    () => h.posted(DOMAIN).find((p) => p.success && p.details.recipient === `${recipient}@${DOMAIN}`),
    `the post for ${recipient}`,
  );
  if (!posted.success) throw new Error('error form');
  return posted.details.headers['Authentication-Results'] ?? [];
}

test('signed by the domain, sent from an SPF-permitted address: dkim=pass, spf=pass, dmarc=pass', async () => {
  const unsigned = message('signed ok', 'Hello, signed world.\r\n');
  const raw = (await dkimpySign(unsigned)) + unsigned;
  const [ar, ...rest] = await receive(raw, 'pass');
  expect(rest).toEqual([]);
  expect(ar).toMatch(/^mx\.mailyard\.test; /);
  expect(ar).toMatch(/\bdkim=pass header\.i=@auth-sender\.test header\.s=s1 header\.a=rsa-sha256 /);
  expect(ar).toMatch(
    /\bspf=pass \(mx\.mailyard\.test: domain of alice@auth-sender\.test designates 127\.0\.0\.1 /,
  );
  expect(ar).toMatch(/\bsmtp\.mailfrom=alice@auth-sender\.test smtp\.helo=client\.auth-sender\.test/);
  expect(ar).toMatch(/\bdmarc=pass \(p=REJECT .*header\.from=auth-sender\.test/);
});

// mailauth reports a body hash mismatch as `neutral` (RFC 6376 §3.9 "PERMFAIL (body hash did not
// verify)"; Gmail writes the same `dkim=neutral (body hash did not verify)`); a signed header
// changed after signing breaks the signature itself: `fail`.
test('body changed after signing (and a forged Authentication-Results): the body hash fails, ours comes first', async () => {
  const unsigned = message('tampered', 'Pay 10 EUR to the usual account.\r\n');
  const signature = await dkimpySign(unsigned);
  const forged = 'Authentication-Results: mx.mailyard.test; dkim=pass header.i=@auth-sender.test\r\n';
  const raw = forged + signature + unsigned.replace('Pay 10 EUR', 'Pay 9000 EUR');
  const [ar, theirs] = await receive(raw, 'tampered');
  expect(ar).toMatch(
    /\bdkim=neutral \(body hash did not verify\) header\.i=@auth-sender\.test header\.s=s1 /,
  );
  expect(ar).toMatch(/\bspf=pass /);
  expect(ar).toMatch(/\bdmarc=pass /); // SPF is aligned: DMARC passes on it alone
  expect(theirs).toBe('mx.mailyard.test; dkim=pass header.i=@auth-sender.test');
});

test('signed Subject changed, sent from an address SPF does not permit: dkim=fail, spf=fail, dmarc=fail', async () => {
  const unsigned = message('from elsewhere', 'Original text.\r\n');
  const raw = (await dkimpySign(unsigned)) + unsigned.replace('Subject: from elsewhere', 'Subject: urgent');
  const [ar] = await receive(raw, 'elsewhere', '127.0.0.2');
  expect(ar).toMatch(/\bdkim=fail \(bad signature\) header\.i=@auth-sender\.test header\.s=s1 /);
  expect(ar).toMatch(
    /\bspf=fail \(mx\.mailyard\.test: domain of alice@auth-sender\.test does not designate 127\.0\.0\.2 /,
  );
  expect(ar).toMatch(/\bdmarc=fail \(p=REJECT /);
});
