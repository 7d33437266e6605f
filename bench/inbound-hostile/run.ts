/**
 * bench:inbound-hostile: the worst inputs we could build for each parser on the MX's inbound
 * path (cases.ts), timed against an honest message of the same path measured in the same
 * process (measure.ts, one process per measurement, BENCH_TIMEOUT_S each, 120 by default: a
 * run past it is reported as `timeout`). Ratios = hostile / honest, so they compare across
 * machines. `BENCH_BASE=<checkout>` measures that checkout (its dependencies installed, e.g. the
 * main branch before the guards) the same way in the same run, for before/after.
 * `BENCH_CASES=a,b` runs only those cases. Also prints what this checkout's MX answers at the
 * end of DATA for each case (header-block.ts) and whether mailauth is given it.
 *
 *   pnpm bench:inbound-hostile
 *   BENCH_BASE=/path/to/main pnpm bench:inbound-hostile
 *
 * The times are the bench's business; the tests assert the bounds (header-block.test.ts,
 * test/inbound-hostile.test.ts), never a duration.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { authenticationProblem, headerBlockProblem, scanHeaderBlock } from '@mailyard/platform';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { printAndKeep, runMain } from '../support/proc';
import { HOSTILE } from './cases';

const run = promisify(execFile);
const TIMEOUT_S = Number(process.env.BENCH_TIMEOUT_S ?? 120);
const TARGETS = { tenant: ['mx', 'mailauth', 'mailparser'], service: ['mx', 'detectors'] } as const;

interface Measured {
  honest_ms: number;
  hostile_ms: number;
  ratio: number;
}

async function measure(root: string, name: string, target: string): Promise<Measured | 'timeout'> {
  try {
    // node itself with tsx's loader (not the tsx CLI, whose child process a kill would orphan)
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'bench/inbound-hostile/measure.ts'), root, name, target],
      {
        cwd: REPO_ROOT,
        timeout: TIMEOUT_S * 1000,
        killSignal: 'SIGKILL',
        maxBuffer: 1 << 20,
        env: { ...process.env, LOG_SILENT: '1' },
      },
    );
    const m = JSON.parse(stdout.trim().split('\n').pop()!) as { honest_ms: number; hostile_ms: number };
    return {
      honest_ms: round(m.honest_ms),
      hostile_ms: round(m.hostile_ms),
      ratio: Math.round(m.hostile_ms / Math.max(m.honest_ms, 0.001)),
    };
  } catch (err) {
    if ((err as { killed?: boolean }).killed) return 'timeout';
    throw err;
  }
}

const round = (ms: number) => Number(ms.toFixed(ms < 10 ? 3 : 1));
const show = (m: Measured | 'timeout' | undefined) =>
  !m ? '' : m === 'timeout' ? `> ${TIMEOUT_S * 1000} ms` : `${m.hostile_ms} ms (x${m.ratio})`;

async function main(): Promise<void> {
  const only = (process.env.BENCH_CASES ?? '').split(',').filter(Boolean);
  const roots: Array<[string, string]> = [['this', REPO_ROOT]];
  if (process.env.BENCH_BASE) roots.unshift(['base', process.env.BENCH_BASE]);
  const rows: Array<Record<string, unknown>> = [];
  for (const c of HOSTILE.filter((h) => only.length === 0 || only.includes(h.name))) {
    const stats = scanHeaderBlock(c.build());
    const verdict = headerBlockProblem(stats);
    for (const target of TARGETS[c.path]) {
      const row: Record<string, unknown> = {
        case: c.name,
        target,
        mx_answer: verdict ? `552 5.3.4 ${verdict}` : '250 (stored)',
        mailauth_given: c.path === 'tenant' ? (authenticationProblem(stats) ?? 'yes') : '',
      };
      for (const [label, root] of roots) row[label] = await measure(root, c.name, target);
      rows.push(row);
      process.stderr.write(
        `${c.name.padEnd(24)} ${target.padEnd(11)} ${roots.map(([l]) => `${l}: ${show(row[l] as Measured)}`).join('   ')}\n`,
      );
    }
  }
  printAndKeep('inbound-hostile', {
    timeout_s: TIMEOUT_S,
    roots: Object.fromEntries(roots),
    cases: Object.fromEntries(HOSTILE.map((h) => [h.name, h.what])),
    rows,
  });
}

runMain(main, { exit: true });
