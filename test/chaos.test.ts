/**
 * Chaos, short form (the long form is `pnpm chaos`, scripts/chaos.ts): the gateway and the send
 * service as separate processes under a steady send load while each is killed with SIGKILL,
 * RabbitMQ is stopped and started, PostgreSQL restarted twice and Redis restarted, all on
 * private servers. No process may exit on its own and every accepted send must be delivered.
 */
import { formatReport, runChaos } from './support/chaos';

jest.setTimeout(600_000);

it('no crash and no accepted send lost while every dependency and process fails once', async () => {
  const report = await runChaos({
    durationMs: Number(process.env.CHAOS_DURATION_MS ?? 75_000),
    rate: Number(process.env.CHAOS_RATE ?? 10),
    log: process.env.LOG_SILENT === '1' ? () => {} : undefined,
  });
  console.log(`chaos (short form)\n${formatReport(report)}`);
  expect(report.faults).toHaveLength(6);
  expect(report.crashes).toEqual([]);
  expect(report.accepted).toBeGreaterThan(0);
  expect(report.lost).toEqual([]);
  expect(report.delivered).toBe(report.accepted);
});
