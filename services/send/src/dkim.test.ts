import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import DKIM from 'nodemailer/lib/dkim';
import NodemailerRelaxedBody from 'nodemailer/lib/dkim/relaxed-body';
import nodemailerSign from 'nodemailer/lib/dkim/sign';
import { DkimError, FIELD_NAMES, dkimSign, parseHeaderFields, relaxedHeaders } from './dkim';
import { canonicalBody, relaxedBodyHash } from './relaxed-body';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const txt = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
const key = { domainName: 'example.org', keySelector: 'sel1', privateKeyPem: pem };

/** What nodemailer's own (streaming) signer writes for `raw`. */
async function nodemailerSigned(raw: Buffer): Promise<Buffer> {
  const stream = new DKIM({ domainName: 'example.org', keySelector: 'sel1', privateKey: pem }).sign(raw);
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** nodemailer's RelaxedBody stream hash of `body` fed in `parts`. */
function nodemailerBodyHash(parts: Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const rb = new NodemailerRelaxedBody({ hashAlgo: 'sha256' });
    rb.on('hash', (h: unknown) => resolve(String(h)));
    rb.on('error', reject);
    rb.resume();
    for (const p of parts) rb.write(p);
    rb.end();
  });
}

const head = [
  'From: Example News <news@example.org>',
  'To: =?UTF-8?Q?User_=C3=9C?= <u@example.com>',
  'Subject: A subject that is long enough to be folded by the composer at some',
  ' point, with  double  spaces',
  'Message-ID: <svc_mailer_1@mailyard.test>',
  'Date: Sun, 01 Mar 2026 10:00:00 +0000',
  'X-Custom :  kept ',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: 7bit',
].join('\r\n');

const bodies: Record<string, string> = {
  'plain lines': 'Hello\r\nthere\r\n',
  'whitespace runs and trailing whitespace': 'a  \t b \r\n\t lead\r\ntrail \t\r\n',
  'bare LF and lone CR': 'one\ntwo\rthree\r\n\r\nfour\r',
  'trailing empty lines': 'text\r\n\r\n\r\n \r\n\t\r\n',
  'empty lines inside': 'a\r\n\r\n\r\nb\r\n',
  'no final line break': 'no newline at end',
  'only empty lines': '\r\n\r\n\r\n',
  empty: '',
};

describe('relaxed body hash', () => {
  for (const [name, body] of Object.entries(bodies)) {
    it(`equals nodemailer's RelaxedBody, in any slicing: ${name}`, async () => {
      const buf = Buffer.from(body);
      const expected = await nodemailerBodyHash([buf]);
      for (const slice of [1, 2, 3, 7, 1024]) expect(await relaxedBodyHash(buf, slice)).toBe(expected);
    });
  }

  it('equals nodemailer on bodies already canonical but for their end (hashed without the byte loop)', async () => {
    const words = ['a', 'word', '=3D', 'x.y', '', 'end'];
    for (let round = 0; round < 40; round++) {
      const lines = Array.from({ length: 1 + (round % 7) }, (_, i) =>
        Array.from({ length: 1 + ((round + i) % 5) }, (_, j) => words[(round * 7 + i * 3 + j) % words.length])
          .filter(Boolean)
          .join(' '),
      );
      const tail = ['', '\r\n', '\n\n', '\r\n\r\n\r\n'][round % 4]!;
      const buf = Buffer.from(lines.join(round % 3 === 0 ? '\n' : '\r\n') + tail);
      expect(canonicalBody(buf)).not.toBeNull();
      expect(await relaxedBodyHash(buf)).toBe(await nodemailerBodyHash([buf]));
    }
    for (const odd of ['a\tb', 'a  b', 'a \r\n', 'a \nb', 'a\rb', 'end '])
      expect(canonicalBody(Buffer.from(odd))).toBeNull();
  });

  it('equals nodemailer on random bytes heavy in CR, LF, SP and TAB', async () => {
    for (let round = 0; round < 30; round++) {
      const alphabet = Buffer.from('\r\n \ta.');
      const buf = Buffer.from([...randomBytes(300)].map((b) => alphabet[b % alphabet.length]!));
      expect(await relaxedBodyHash(buf, 17)).toBe(await nodemailerBodyHash([buf]));
    }
  });
});

describe('relaxedHeaders', () => {
  const theirs = (
    nodemailerSign as unknown as {
      relaxedHeaders(
        h: Array<{ key: string; line: string }>,
        names: string,
      ): { headers: string; fieldNames: string };
    }
  ).relaxedHeaders;
  const names = [
    'From',
    'to',
    'SUBJECT',
    'Cc',
    'X-Other',
    'List-Unsubscribe-Post',
    'Received',
    'Date',
    'otp-token',
  ];
  const values = ['a', '  spaced   out ', 'x\r\n folded\t here', '', '\t', 'b\u00a0c', '=?UTF-8?Q?=C3=9C?='];

  it("selects and canonicalizes like nodemailer's, for generated header blocks (repeats, case, unlisted fields)", () => {
    for (let round = 0; round < 300; round++) {
      const lines = Array.from(
        { length: round % 12 },
        (_, i) =>
          `${names[(round * 5 + i * 3) % names.length]}${i % 4 === 0 ? ' ' : ''}:${values[(round + i) % values.length]}`,
      );
      const fields = parseHeaderFields(Buffer.from(lines.join('\r\n'), 'latin1'));
      expect(relaxedHeaders(fields)).toEqual(theirs(fields, FIELD_NAMES));
    }
  });
});

describe('dkimSign', () => {
  for (const [name, body] of Object.entries(bodies)) {
    it(`writes what nodemailer's signer writes: ${name}`, async () => {
      const raw = Buffer.from(`${head}\r\n\r\n${body}`);
      expect((await dkimSign(raw, key)).toString('latin1')).toBe(
        (await nodemailerSigned(raw)).toString('latin1'),
      );
    });
  }

  it('signs a headers-only message and one with LF line ends like nodemailer', async () => {
    for (const raw of [Buffer.from(head), Buffer.from(`${head.replace(/\r\n/g, '\n')}\n\nbody\n`)]) {
      expect((await dkimSign(raw, key)).toString('latin1')).toBe(
        (await nodemailerSigned(raw)).toString('latin1'),
      );
    }
  });

  it('passes an independent verifier (mailauth)', async () => {
    const signed = await dkimSign(
      Buffer.from(`${head}\r\n\r\n${bodies['whitespace runs and trailing whitespace']}`),
      key,
    );
    const result = await dkimVerify(signed, {
      resolver: async (name: string, type: string) => {
        if (type === 'TXT' && name === 'sel1._domainkey.example.org') return [[txt]];
        const err = new Error('not found') as NodeJS.ErrnoException;
        err.code = 'ENOTFOUND';
        throw err;
      },
    });
    expect(result.results[0]?.status?.result).toBe('pass');
  });

  it('refuses to send unsigned: missing or unreadable key', async () => {
    const raw = Buffer.from(`${head}\r\n\r\nx`);
    await expect(dkimSign(raw, { ...key, privateKeyPem: '' })).rejects.toBeInstanceOf(DkimError);
    await expect(dkimSign(raw, { ...key, privateKeyPem: 'not a key' })).rejects.toBeInstanceOf(DkimError);
  });
});
