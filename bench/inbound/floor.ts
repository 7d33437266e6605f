/**
 * The floor under bench:inbound: the same `smtp-source -N -s 20 -m 2000 -l 2048` against a
 * smtp-server that does nothing (accepts and discards; the MX service's options: no reverse
 * lookup, no AUTH, greeting delay `FLOOR_GREETING_DELAY_MS`, default 0) in this process, and
 * against Postfix's smtp-sink, alternately. Reports each one's rate and this process's CPU-ms per
 * message: what the SMTP conversation alone costs in Node before any storing, parsing or posting.
 *
 *   pnpm exec tsx bench/inbound/floor.ts
 *   FLOOR_GREETING_DELAY_MS=100 pnpm exec tsx bench/inbound/floor.ts   # smtp-server's old fixed wait
 */
import { execFile } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { promisify } from 'node:util';
import { startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { SMTPServer } from 'smtp-server';

const run = promisify(execFile);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 20);
const DELAY = Number(process.env.FLOOR_GREETING_DELAY_MS ?? 0);

async function source(
  port: number,
  count: number,
): Promise<{ msgs_per_sec: number; cpu_ms_per_message: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const args = ['-N', '-s', String(SESSIONS), '-m', String(count), '-l', '2048', `127.0.0.1:${port}`];
  await run('smtp-source', args);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return {
    msgs_per_sec: Math.round(count / seconds),
    cpu_ms_per_message: Number(((cpu.user + cpu.system) / 1000 / count).toFixed(3)),
  };
}

async function main(): Promise<void> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH'],
    disableReverseLookup: true,
    logger: false,
    maxClients: 200,
    earlyTalkerDelay: DELAY,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => callback(null, 'Ok'));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const sink = await startSmtpSink({ backlog: 1024 });
  try {
    await source(port, 300); // warm-up
    const rounds = [];
    for (let i = 0; i < 2; i++)
      rounds.push({
        node_smtp_server: await source(port, MESSAGES),
        smtp_sink: await source(sink.port, MESSAGES),
      });
    console.log(
      JSON.stringify(
        {
          benchmark: 'inbound-floor',
          at: new Date().toISOString(),
          machine: { cpus: cpus().length, loadavg_1m_at_end: Number(loadavg()[0]!.toFixed(2)) },
          note: 'cpu_ms_per_message of smtp_sink is this process (idle), not smtp-sink',
          greeting_delay_ms: DELAY,
          messages: MESSAGES,
          sessions: SESSIONS,
          rounds,
        },
        null,
        2,
      ),
    );
  } finally {
    await sink.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

void main();
