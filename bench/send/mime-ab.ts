/**
 * The MIME build of one copy (`buildMessage`) of two checkouts alternated in this one process (no
 * servers), over the shapes the send service builds: the benchmark's text + HTML copy, HTML only,
 * a copy with an attached file and an inline image, and a 300 KB HTML copy. Medians of CPU µs per
 * copy over alternated rounds, and B's ratio to A (below 1: B is faster).
 *
 *   pnpm tsx bench/send/mime-ab.ts <other checkout>      # that checkout (A) against this one (B)
 *   BENCH_AB_ROUNDS=15 BENCH_AB_COPIES=2000 pnpm tsx bench/send/mime-ab.ts <checkout>
 */
import type { StoredSendRequest } from '@mailyard/contracts';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { printAndKeep, runMain } from '../support/proc';
import { sendCode } from './send-code';

const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? 10);
const COPIES = Number(process.env.BENCH_AB_COPIES ?? 2000);

type Build = Awaited<ReturnType<typeof sendCode>>['buildMessage'];
type Input = Parameters<Build>[0];

const paragraph = 'Here is what happened this week. '.repeat(20);
const text = (i: number) => `Hello Reader ${i}\n\n${paragraph}\nhttps://bench.test/digest`;
const html = (i: number) => `<html><body><h1>Hello Reader ${i}</h1><p>${paragraph}</p></body></html>`;
const request = (attachments?: StoredSendRequest['attachments']): Input['request'] => ({
  from: { email: 'news@bench.test', name: 'Bench News' },
  headers: { 'X-Campaign': 'spring' },
  ...(attachments ? { attachments } : {}),
});
const withFiles = request([
  {
    filename: 'report.pdf',
    content: Buffer.alloc(20_000, 7).toString('base64'),
    type: 'application/pdf',
    disposition: 'attachment',
  },
  {
    filename: 'logo.png',
    content: Buffer.alloc(3_000, 9).toString('base64'),
    type: 'image/png',
    disposition: 'inline',
    content_id: 'logo',
  },
]);
const plain = request();
const bigHtml = `<html><body>${`<p>${paragraph}</p>`.repeat(450)}</body></html>`;

const SHAPES: Record<string, (i: number) => Input> = {
  text_and_html: (i) =>
    copy(plain, { subject: `Your weekly digest, Reader ${i}`, text: text(i), html: html(i) }, i),
  html_only: (i) => copy(plain, { subject: `Your weekly digest, Reader ${i}`, html: html(i) }, i),
  attachments: (i) => copy(withFiles, { subject: `Files, Reader ${i}`, text: text(i), html: html(i) }, i),
  html_300kb: (i) => copy(plain, { subject: `Archive, Reader ${i}`, html: bigHtml }, i),
};

function copy(req: Input['request'], rendered: Input['rendered'], i: number): Input {
  return {
    request: req,
    recipients: [{ email: `b${i}@example.com`, name: `Reader ${i}`, type: 'to' }],
    rendered,
    copyId: `01JBENCHMIMEAB.${i}`,
    serviceDomain: 'mailyard.bench',
  };
}

/** CPU µs per copy of `build` over `n` copies of `shape`. */
async function cpuUsPerCopy(build: Build, shape: (i: number) => Input, n: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await build(shape(i));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other) throw new Error('usage: mime-ab.ts <other checkout>');
  const builds = { a: (await sendCode(other)).buildMessage, b: (await sendCode(REPO_ROOT)).buildMessage };
  const runs: Record<string, { a: number[]; b: number[] }> = {};
  for (const [name, shape] of Object.entries(SHAPES)) {
    const copies = name === 'html_300kb' ? Math.max(1, COPIES / 20) : COPIES;
    // Warm-up (JIT, attachment parts), then alternated rounds.
    for (const build of [builds.a, builds.b]) await cpuUsPerCopy(build, shape, Math.min(copies, 200));
    const r = { a: [] as number[], b: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      r.a.push(await cpuUsPerCopy(builds.a, shape, copies));
      r.b.push(await cpuUsPerCopy(builds.b, shape, copies));
    }
    runs[name] = r;
  }
  printAndKeep('send-mime-ab', {
    benchmark: 'send-mime-ab',
    note: `median CPU µs per copy of buildMessage over ${ROUNDS} alternated rounds`,
    a: other,
    b: 'this checkout',
    shapes: Object.fromEntries(
      Object.entries(runs).map(([name, r]) => {
        const [a, b] = [median(r.a), median(r.b)];
        return [
          name,
          { a_us: Number(a.toFixed(1)), b_us: Number(b.toFixed(1)), b_to_a: Number((b / a).toFixed(3)) },
        ];
      }),
    ),
  });
}

runMain(main);
