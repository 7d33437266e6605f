/**
 * One measurement of bench:inbound-hostile (run.ts starts it as its own process, with a time
 * limit): `tsx measure.ts <checkout> <case> <target>` loads that checkout's own modules and
 * times, in this process, the honest message of the case's path (warmed up, median of 30) and
 * the hostile one (median of up to 5 runs, one when a run takes over a second), through what the
 * processing of a stored message runs for that target:
 * - `mx`: the MX's end-of-DATA checks (header block scan where the checkout has it, In-Reply-To);
 * - `mailauth`: authenticate.ts authenticationResults, DNS answering NXDOMAIN at once;
 * - `mailparser`: libs/platform buildIncomingEmails (the INCOMING_EMAIL payload);
 * - `detectors`: the bounce-domain readers (report-mime, arf-detect, bounce-detect);
 * a checkout with header-block.ts skips the parsers for a header block over its limits, as its
 * process-message.ts and service-mail.ts do. Prints one JSON line.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HOSTILE, honest } from './cases';

type Fn = (raw: Buffer) => Promise<unknown>;

async function targets(root: string): Promise<Record<string, Fn>> {
  const src = (p: string) => join(root, 'services/inbound-smtp/src', p);
  // The header checks moved to libs/platform src/mail/ (issue 27): the checkout's, wherever they are.
  const check = (p: string) =>
    [join(root, 'libs/platform/src/mail', p), src(p)].find((f) => existsSync(f)) ?? null;
  // the checks of the checkout: none before issue 23, the top header block, then its MIME parts too
  const partsFile = check('part-headers.ts');
  const hbFile = check('header-block.ts');
  const parts = partsFile ? await import(partsFile) : null;
  const hb = hbFile ? await import(hbFile) : null;
  const refused = (raw: Buffer): boolean =>
    parts
      ? parts.messageHeaderProblem(raw) !== null
      : hb
        ? hb.headerBlockProblem(hb.scanHeaderBlock(raw)) !== null
        : false;
  const auth = await import(src('authenticate.ts'));
  const server = await import(src('server.ts'));
  const mime = await import(src('report-mime.ts'));
  const arf = await import(src('arf-detect.ts'));
  const bounce = await import(src('bounce-detect.ts'));
  const platform = await import(join(root, 'libs/platform/src/index.ts'));
  const nxdomain = async () => {
    throw Object.assign(new Error('queryTxt ENOTFOUND'), { code: 'ENOTFOUND' });
  };
  const context = {
    recipient: 'bob@in.example.com',
    webhookId: 'in.example.com',
    mailerId: 'm',
    mailerService: 'smtp',
    labelIds: [],
  };
  return {
    mx: async (raw) => {
      refused(raw);
      server.headerValue(raw, 'in-reply-to');
    },
    mailauth: async (raw) =>
      refused(raw)
        ? null
        : auth.authenticationResults(
            {
              raw,
              ip: '192.0.2.1',
              helo: 'mail.sender.example',
              mailFrom: 'alice@sender.example',
              mta: 'mx.test',
            },
            nxdomain,
            600_000,
          ),
    mailparser: async (raw) => (refused(raw) ? null : platform.buildIncomingEmails(raw, [context])),
    detectors: async (raw) => {
      if (refused(raw) || platform.isServiceSent(raw)) return null;
      const mail = mime.readMime(raw);
      return arf.detectComplaint(mail) ?? bounce.detectBounce(mail);
    },
  };
}

async function time(fn: Fn, raw: Buffer): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn(raw);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const [root, caseName, target] = process.argv.slice(2) as [string, string, string];
  const c = HOSTILE.find((h) => h.name === caseName);
  if (!c) throw new Error(`no case ${caseName}`);
  const fn = (await targets(root))[target];
  if (!fn) throw new Error(`no target ${target}`);
  // mailauth 4.x prints a debug line per signature with l=: keep the JSON line readable
  console.log = () => {};
  const base = honest(c.path, root);
  for (let i = 0; i < 30; i++) await time(fn, base);
  const honestRuns: number[] = [];
  for (let i = 0; i < 30; i++) honestRuns.push(await time(fn, base));
  const raw = c.build();
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    runs.push(await time(fn, raw));
    if (runs[0]! > 1000) break;
  }
  process.stdout.write(
    `${JSON.stringify({ honest_ms: median(honestRuns), hostile_ms: median(runs), bytes: raw.length })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
