/**
 * The hostile inputs of bench:inbound-hostile: for each parser on the inbound path the worst
 * message we could build within the MX's limits (libs/platform/src/mail/header-block.ts:
 * header block 512 KB / 10,000 lines, address fields 64 KB / 2,000 entries, parameter fields
 * 128 KB, the same for all MIME part headers together; 25 MB messages), plus the
 * issue's own reproduction (one header folded into 68k one-character lines, over the line cap)
 * and the honest messages every ratio is measured against. Each case names the path it attacks:
 * `tenant` (mail to a tenant's address: mailauth, then mailparser) or `service` (mail to the
 * bounce domain, `fbl@` is always accepted: the report readers and detectors).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface HostileCase {
  name: string;
  path: 'tenant' | 'service';
  /** What it attacks, one line. */
  what: string;
  build(): Buffer;
}

const KB = 1024;
const CRLF = '\r\n';
/** `unit` repeated to fill about `bytes`. */
const fill = (unit: string, bytes: number) => unit.repeat(Math.max(1, Math.floor(bytes / unit.length)));
const msg = (head: string, body = 'hello\r\n') => Buffer.from(`${head}${CRLF}${body}`, 'latin1');
const BASE = 'From: Alice <alice@sender.example>\r\nTo: bob@in.example.com\r\nSubject: hi\r\n';
const DAEMON = 'From: MAILER-DAEMON@mx.example\r\nSubject: Undelivered Mail Returned to Sender\r\n';
/** The header budget left for the attack after BASE, under 512 KB and 10,000 lines. */
const HEAD = 500 * KB;
const LINES = 9_900;

/** DKIM-Signature fields with distinct l= and domains, about `bytes` of them. */
function dkimSignatures(bytes: number): string {
  const sigs: string[] = [];
  for (let i = 0, size = 0; size < bytes && sigs.length < LINES; i++) {
    const s = `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=s${i}.example; s=k; l=${i}; h=from; bh=x; b=x\r\n`;
    if (size + s.length > bytes) break;
    sigs.push(s);
    size += s.length;
  }
  return sigs.join('');
}

const report = (type: string, fields: string, third = '') =>
  msg(
    `From: reports@mx.example\r\nContent-Type: multipart/report; report-type=${type}; boundary=b\r\n`,
    `--b\r\nContent-Type: text/plain\r\n\r\nreport\r\n--b\r\nContent-Type: message/${type}\r\n\r\n${fields}\r\n${third}--b--\r\n`,
  );

export const HOSTILE: HostileCase[] = [
  {
    name: 'issue-68k-folded',
    path: 'tenant',
    what: 'the issue: one header folded into 68k one-character lines (205 KB); over the line cap',
    build: () => msg(`${BASE}X-Folded: a\r\n${' b\r\n'.repeat(68_000)}`),
  },
  {
    name: 'folded-at-line-cap',
    path: 'tenant',
    what: 'one header folded into 9,900 one-character lines: within the MX caps (mailauth unfolding)',
    build: () => msg(`${BASE}X-Folded: a\r\n${' b\r\n'.repeat(LINES)}`),
  },
  {
    name: 'folded-at-byte-cap',
    path: 'tenant',
    what: 'one 500 KB header folded into 9,900 lines',
    build: () => msg(`${BASE}X-Folded: a\r\n${` ${'b'.repeat(49)}\r\n`.repeat(LINES)}`),
  },
  {
    name: 'repeated-field',
    path: 'tenant',
    what: '9,900 fields of one name',
    build: () => msg(`${BASE}${'X-Same: a\r\n'.repeat(LINES)}`),
  },
  {
    name: 'dkim-distinct-l',
    path: 'tenant',
    what: 'DKIM-Signature fields with distinct l= (one body hash each, a DNS query each), 126 KB',
    build: () => msg(`${BASE}${dkimSignatures(126 * KB)}`, fill('body line\r\n', 1024 * KB)),
  },
  {
    name: 'dkim-distinct-l-over-cap',
    path: 'tenant',
    what: 'the same, 500 KB of them: over the parameter-field cap, refused',
    build: () => msg(`${BASE}${dkimSignatures(HEAD)}`, fill('body line\r\n', 1024 * KB)),
  },
  {
    name: 'dkim-long-h',
    path: 'tenant',
    what: 'one DKIM-Signature whose h= lists 40k names (120 KB), 5,000 other fields (h= x fields)',
    build: () =>
      msg(
        `${BASE}DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=x.example; s=k; bh=x; b=x; h=${'zz:'.repeat(40_000)}from\r\n${'X-A: a\r\n'.repeat(5_000)}`,
      ),
  },
  {
    name: 'from-address-list',
    path: 'tenant',
    what: 'From with 1,998 addresses, 24 KB (mailauth addressparser, mailparser address objects)',
    build: () => msg(`From: ${'a@b.example,'.repeat(1_997)}\r\nTo: bob@in.example.com\r\n`),
  },
  {
    name: 'to-groups',
    path: 'tenant',
    what: 'To with 1,999 one-address groups (mailparser address objects)',
    build: () => msg(`From: alice@sender.example\r\nTo: ${'g:a@b.c;'.repeat(1_998)}\r\n`),
  },
  {
    name: 'to-encoded-names',
    path: 'tenant',
    what: 'To with 64 KB of addresses with encoded-word names (1,200 of them)',
    build: () =>
      msg(
        `From: alice@sender.example\r\nTo: ${'=?utf-8?B?QUFBQUFBQUFBQUFBQUFBQUFB?= <a@b.c>, '.repeat(1_200)}\r\n`,
      ),
  },
  {
    name: 'to-groups-over-cap',
    path: 'tenant',
    what: 'To with 128 KB of one-address groups (16k): over the address caps, refused',
    build: () => msg(`From: alice@sender.example\r\nTo: ${fill('g:a@b.c;', 127 * KB)}\r\n`),
  },
  {
    name: 'part-to-groups',
    path: 'tenant',
    what: 'multipart: 32 parts whose To fields hold 62 groups each (1,984 entries, within the caps)',
    build: () =>
      msg(
        'From: alice@sender.example\r\nContent-Type: multipart/mixed; boundary=b\r\n',
        `--b\r\nTo: ${'g:a@b.c;'.repeat(61)}\r\n\r\nx\r\n`.repeat(32),
      ),
  },
  {
    name: 'part-to-groups-over-cap',
    path: 'tenant',
    what: 'multipart: one part whose To holds 512 KB of groups (mailsplit allows 1 MB a part header)',
    build: () =>
      msg(
        'From: alice@sender.example\r\nContent-Type: multipart/mixed; boundary=b\r\n',
        `--b\r\nTo: ${fill('g:a@b.c;', 500 * KB)}\r\n\r\nx\r\n--b--\r\n`,
      ),
  },
  {
    name: 'part-content-type-rfc2231',
    path: 'tenant',
    what: 'multipart: 20 parts, each Content-Type with 250 RFC 2231 continuations (115 KB together)',
    build: () =>
      msg(
        'From: alice@sender.example\r\nContent-Type: multipart/mixed; boundary=b\r\n',
        `--b\r\nContent-Type: text/plain; ${Array.from({ length: 250 }, (_, i) => `name*${i}*=utf-8''%41`).join('; ')}\r\n\r\nx\r\n`.repeat(
          20,
        ),
      ),
  },
  {
    name: 'subject-encoded-words',
    path: 'tenant',
    what: 'Subject of 500 KB of encoded words',
    build: () => msg(`${BASE}X-Subject: ${fill('=?utf-8?B?QQ==?= ', HEAD)}\r\n`),
  },
  {
    name: 'received-long',
    path: 'tenant',
    what: 'one 500 KB Received field (mailauth parses every Received)',
    build: () => msg(`${BASE}Received: ${fill('from a (b [192.0.2.1]) ', HEAD)}\r\n`),
  },
  {
    name: 'content-type-rfc2231',
    path: 'tenant',
    what: 'Content-Type with 5,000 RFC 2231 continuations (115 KB)',
    build: () =>
      msg(
        `From: alice@sender.example\r\nContent-Type: text/plain; ${Array.from({ length: 5_000 }, (_, i) => `name*${i}*=utf-8''%41`).join('; ')}\r\n`,
      ),
  },
  {
    name: 'bounce-blank-lines',
    path: 'service',
    what: 'a bounce whose text is 1 MB of empty lines (`^\\s*` patterns)',
    build: () => msg(DAEMON, '\n'.repeat(1024 * KB)),
  },
  {
    name: 'bounce-gmail-newlines',
    path: 'service',
    what: "Gmail's reply pattern followed by 64 KB of newlines",
    build: () => msg(DAEMON, `The response from the remote server was:${'\n'.repeat(64 * KB)}`),
  },
  {
    name: 'bounce-exim-newlines',
    path: 'service',
    what: "Exim's failed: pattern followed by 64 KB of newlines",
    build: () => msg(DAEMON, `could not be delivered\nfailed:${'\n'.repeat(64 * KB)}`),
  },
  {
    name: 'bounce-outlook-at-token',
    path: 'service',
    what: 'Outlook pattern with a 64 KB token of a@a@a@...',
    build: () => msg(DAEMON, `could not be delivered\nYour message to ${'a@'.repeat(32 * KB)} was`),
  },
  {
    name: 'bounce-html-tags',
    path: 'service',
    what: 'an HTML bounce of 64 KB of unclosed <script',
    build: () => msg(`${DAEMON}Content-Type: text/html\r\n`, fill('<script', 64 * KB)),
  },
  {
    name: 'arf-long-token',
    path: 'service',
    what: 'ARF report: Original-Mail-From and the original Return-Path as 60 KB / 400 KB tokens without @',
    build: () =>
      report(
        'feedback-report',
        `Feedback-Type: abuse\r\nOriginal-Mail-From: ${'a'.repeat(60 * KB)}`,
        `--b\r\nContent-Type: text/rfc822-headers\r\n\r\nReturn-Path: ${'a'.repeat(400 * KB)}\r\n`,
      ),
  },
  {
    name: 'dsn-long-token',
    path: 'service',
    what: 'DSN whose Final-Recipient is a 60 KB token without @',
    build: () =>
      report(
        'delivery-status',
        `Reporting-MTA: dns; mx.example\r\n\r\nAction: failed\r\nFinal-Recipient: rfc822; ${'a'.repeat(60 * KB)}`,
      ),
  },
  {
    name: 'report-repeated-fields',
    path: 'service',
    what: 'a report part whose header repeats one field 9,900 times',
    build: () =>
      msg(
        'From: reports@mx.example\r\nContent-Type: multipart/mixed; boundary=b\r\n',
        `--b\r\n${'X-Same: a\r\n'.repeat(LINES)}\r\nx\r\n--b--\r\n`,
      ),
  },
];

/** The honest messages of each path: a typical tenant mail and a Postfix DSN. */
export function honest(path: 'tenant' | 'service', repoRoot: string): Buffer {
  if (path === 'service')
    return readFileSync(join(repoRoot, 'services/inbound-smtp/src/fixtures/postfix-hard.eml'));
  return readFileSync(join(repoRoot, 'libs/platform/src/mail/fixtures/alternative.eml'));
}
