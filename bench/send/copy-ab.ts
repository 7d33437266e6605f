import { dkimKeyPair } from '@mailyard/testkit/fixtures';
/**
 * The `copy` phase of two checkouts' send code alternated in this one process (no servers), so
 * both see the same load: on a shared machine the CPU per copy moves 2x between runs minutes
 * apart, which hides a change of a tenth of a millisecond. Prints the median per step of each.
 *
 *   pnpm tsx bench/send/copy-ab.ts ../other-checkout      # that checkout (A) against this one (B)
 *   BENCH_AB_ROUNDS=20 BENCH_AB_COPIES=500 pnpm tsx bench/send/copy-ab.ts <checkout>
 */
import { REPO_ROOT } from '@mailyard/testkit/process';
import { printAndKeep, runMain } from '../support/proc';
import { copyCost } from './copy-cost';
import { DOMAIN, singleBody } from './pipeline';

const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? 10);
const COPIES = Number(process.env.BENCH_AB_COPIES ?? 500);

type Cost = Awaited<ReturnType<typeof copyCost>>;
const STEPS = ['render_ms', 'phishing_check_ms', 'mime_build_ms', 'dkim_sign_ms', 'total_ms'] as const;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other) throw new Error('usage: copy-ab.ts <other checkout>');
  const key = dkimKeyPair();
  const body = (i: number) => singleBody('ab', i);
  const runs: Record<'a' | 'b', Cost[]> = { a: [], b: [] };
  for (let r = 0; r < ROUNDS; r++) {
    runs.a.push(await copyCost(body, key, DOMAIN, COPIES, other));
    runs.b.push(await copyCost(body, key, DOMAIN, COPIES, REPO_ROOT));
  }
  const summary = (costs: Cost[]) =>
    Object.fromEntries(STEPS.map((s) => [s, Number(median(costs.map((c) => c[s])).toFixed(3))]));
  printAndKeep('send-copy-ab', {
    benchmark: 'send-copy-ab',
    note: `median CPU ms per copy over ${ROUNDS} alternated rounds of ${COPIES} copies`,
    a: { checkout: other, ...summary(runs.a) },
    b: { checkout: 'this checkout', ...summary(runs.b) },
  });
}

runMain(main);
