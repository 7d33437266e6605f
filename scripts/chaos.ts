/**
 * `pnpm chaos` — the long chaos run by hand (see test/support/chaos.ts and docs/running.md "When PostgreSQL, RabbitMQ or Redis is down").
 * Knobs (environment): CHAOS_DURATION_S (default 600), CHAOS_RATE sends/s (default 30),
 * CHAOS_ROUNDS rounds of the fault schedule (default: one per 100 s). Prints the report as text
 * and JSON; exits 1 when a process crashed or an accepted send was lost.
 */
import { formatReport, runChaos } from '../test/support/chaos';

async function main(): Promise<void> {
  const durationS = Number(process.env.CHAOS_DURATION_S ?? 600);
  const rate = Number(process.env.CHAOS_RATE ?? 30);
  const rounds = Number(process.env.CHAOS_ROUNDS ?? Math.max(1, Math.floor(durationS / 100)));
  const report = await runChaos({ durationMs: durationS * 1000, rate, rounds, drainTimeoutMs: 600_000 });
  process.stdout.write(
    `\n${formatReport(report)}\n${JSON.stringify({ ...report, lost: report.lost.length, lost_ref_ids: report.lost.slice(0, 50) })}\n`,
  );
  process.exit(report.crashes.length === 0 && report.lost.length === 0 ? 0 : 1);
}

main().catch((err) => {
  process.stderr.write(`chaos run failed: ${(err as Error).stack ?? err}\n`);
  process.exit(2);
});
