/**
 * Summarizes the `.cpuprofile` files a benchmark left (`BENCH_CPU_PROF` of bench:inbound,
 * bench:webhooks, bench:backfill), each directory as one process, over all their samples:
 * areas, top self time, the repository's functions by inclusive time, bundle frames resolved
 * through the bundle's source map (./profile).
 *
 *   pnpm exec tsx bench/support/summarize-profiles.ts bench/results/prof-1764170000000/imap-backfill
 *
 * `BENCH_SERVICES_ROOT=<checkout>` when the services ran from another checkout (paths show relative to it).
 */
import { readProfiles, summarize, summaryText } from './profile';
import { SERVICES_ROOT } from './services';

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error('usage: summarize-profiles.ts <dir with .cpuprofile files>...');
  process.exit(2);
}
const summaries = Object.fromEntries(
  dirs.map((dir) => [dir, summarize(readProfiles(dir), SERVICES_ROOT)] as const),
);
console.log(summaryText('CPU profiles (all samples)', summaries));
