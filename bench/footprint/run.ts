/**
 * Footprint benchmark: the idle resident memory of `pnpm start` (all-in-one, embedded defaults:
 * PGlite, in-process bus and kv) on a fresh temporary DATA_DIR. Starts it, waits for the gateway's
 * /readyz, lets start-up settle (BENCH_SETTLE_S, 15 s), then samples VmRSS of every process of the
 * tree under the command (BENCH_SAMPLES, 5, one a second) and prints JSON: per process (command,
 * RSS median and peak VmHWM, anonymous and file-backed), the total with and without the package
 * manager's own process, and the heap figures of the process's /metrics (its ops port). Then it stops the tree with
 * SIGTERM and starts the same command again on the same DATA_DIR (BENCH_STARTS, 2): the first
 * start creates the database and the first tenant, the second is an ordinary restart.
 *
 *   pnpm bench:footprint                           # `pnpm start`
 *   BENCH_COMMAND='pnpm dev' pnpm bench:footprint  # the same for the TypeScript (tsx) run
 *   BENCH_DIR=/tmp/old-checkout pnpm bench:footprint  # another checkout (installed), e.g. before/after
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@mailyard/testkit/process';

const COMMAND = process.env.BENCH_COMMAND ?? 'pnpm start';
/** Where to run it: this checkout, or another one (e.g. an older commit, for a before/after). */
const DIR = process.env.BENCH_DIR ?? REPO_ROOT;
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 15);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 5);
const STARTS = Number(process.env.BENCH_STARTS ?? 2);
const AIM_MB = 250;

interface Proc {
  pid: number;
  command: string;
  rss_mb: number;
  hwm_mb: number;
  anon_mb: number;
  file_mb: number;
}

const mb = (kb: number) => Math.round(kb / 102.4) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pid and every descendant of it, from /proc/<pid>/stat (field 4 is the parent pid). */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

function sample(pid: number): Proc | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return {
      pid,
      command: command.length > 140 ? `${command.slice(0, 137)}...` : command,
      rss_mb: mb(kb('VmRSS')),
      hwm_mb: mb(kb('VmHWM')),
      anon_mb: mb(kb('RssAnon')),
      file_mb: mb(kb('RssFile')),
    };
  } catch {
    return null;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** Heap figures the process's Prometheus endpoint (`base`/metrics) reports. */
async function heapMetrics(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const pick = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([\\d.e+]+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    heap_total_mb: mb(pick('mailyard_nodejs_heap_size_total_bytes') / 1024),
    heap_used_mb: mb(pick('mailyard_nodejs_heap_size_used_bytes') / 1024),
    external_mb: mb(pick('mailyard_nodejs_external_memory_bytes') / 1024),
  };
}

async function measure(dataDir: string, n: number) {
  const child = spawn('sh', ['-c', `exec ${COMMAND}`], {
    cwd: DIR,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      TRACKING_PORT: '0',
      SMTP_PORT: '0',
      OPS_PORT: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const started = Date.now();
  try {
    let base: string | undefined;
    while (!base) {
      if (child.exitCode !== null) throw new Error(`${COMMAND} exited:\n${out}`);
      if (Date.now() - started > 300_000) throw new Error(`no API URL after 300 s:\n${out}`);
      base = /API (http:\/\/[\d.]+:\d+)\/v1/.exec(out)?.[1];
      await sleep(200);
    }
    while ((await fetch(`${base}/readyz`).catch(() => null))?.status !== 200) await sleep(200);
    // The ops port named in the banner; a checkout from before it served /metrics on the API port.
    const ops = /ops: http:\/\/[\d.]+:(\d+)\/healthz/.exec(out)?.[1];
    const metricsBase = ops ? `http://127.0.0.1:${ops}` : base;
    const readyAfterS = (Date.now() - started) / 1000;
    await sleep(SETTLE_S * 1000);
    const rounds: Proc[][] = [];
    for (let i = 0; i < SAMPLES; i++) {
      rounds.push(
        tree(child.pid!)
          .map(sample)
          .filter((p): p is Proc => p !== null),
      );
      await sleep(1000);
    }
    const last = rounds[rounds.length - 1]!;
    const processes = last.map((p) => ({
      ...p,
      rss_mb: median(rounds.map((r) => r.find((q) => q.pid === p.pid)?.rss_mb ?? 0)),
    }));
    const total = (ps: Proc[]) => Math.round(ps.reduce((s, p) => s + p.rss_mb, 0) * 10) / 10;
    // The package manager stays the parent of whatever `pnpm <script>` runs; not Mailyard's own.
    const isPackageManager = (p: Proc) =>
      /(^|\/)(pnpm|npm)(\.c?js)?( |$)/.test(p.command) || /^sh -c /.test(p.command);
    const mailyard = processes.filter((p) => !isPackageManager(p));
    return {
      start: n === 0 ? 'first (creates the database and the first tenant)' : 'restart on the same DATA_DIR',
      ready_after_s: readyAfterS,
      processes,
      total_rss_mb: total(processes),
      mailyard_rss_mb: total(mailyard),
      mailyard_processes: mailyard.length,
      gateway_metrics: await heapMetrics(metricsBase),
    };
  } finally {
    // SIGTERM to every process of the tree (the server drains and releases DATA_DIR), then
    // SIGKILL to whatever is left after 30 s.
    const pids = tree(child.pid!);
    for (const pid of pids) signal(pid, 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while (pids.some(alive) && Date.now() < deadline) await sleep(200);
    for (const pid of pids) signal(pid, 'SIGKILL');
    await exited;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig);
  } catch {
    // gone
  }
};

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailyard-footprint-'));
  try {
    const starts = [];
    for (let n = 0; n < STARTS; n++) starts.push(await measure(dataDir, n));
    const report = {
      benchmark: 'footprint',
      at: new Date().toISOString(),
      command: COMMAND,
      dir: DIR,
      settle_s: SETTLE_S,
      samples: SAMPLES,
      starts,
      aim: { idle_mailyard_rss_mb_under: AIM_MB },
    };
    const json = JSON.stringify(report, null, 2);
    process.stdout.write(`${json}\n`);
    const dir = join(REPO_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `footprint-${Date.now()}.json`), json);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
