/**
 * What publishing the gateway's send commands costs its process: the outbox relay's publish
 * path (libs/platform bus: envelope encoding, the confirm channel, amqplib's framing, the socket
 * writes, the confirms) on the real RabbitMQ, without the database. `BENCH_MESSAGES` (20000)
 * `send.email` envelopes as the gateway writes them are published in batches of `BENCH_BATCH`
 * (20, as the relay publishes a batch: all at once, then every confirm awaited) into a vhost of
 * their own with a durable queue bound as the send service's is; `BENCH_REPEATS` (5) runs after
 * a warm-up; it reports the lowest user+system CPU per message of this process (the run least
 * disturbed by the rest of the machine), and the write system calls per message
 * (`/proc/self/io` syscw, all threads).
 *
 *   pnpm exec tsx bench/gateway/publish.ts
 */
import { readFileSync } from 'node:fs';
import { BusMessages, RoutingKey, commandOfOneCopy, ulid } from '@mailyard/contracts';
import { createLogger, openBus, outboxMessage } from '@mailyard/platform';
import { createTestVhost } from '@mailyard/testkit/servers';
import amqplib from 'amqplib';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 20_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 20);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);

const syscw = () => Number(/^syscw: (\d+)/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);

async function main(): Promise<void> {
  const vhost = createTestVhost();
  const logger = createLogger('bench', 'error');
  const bus = await openBus({ AMQP_URL: vhost.url }, logger, { queues: [] });
  // A durable queue bound like the send service's, so RabbitMQ routes and stores every message.
  const admin = await amqplib.connect(vhost.url);
  const ch = await admin.createChannel();
  await ch.assertQueue('bench.send', { durable: true });
  await ch.bindQueue('bench.send', BusMessages.sendEmail.exchange, RoutingKey.sendEmail);
  const row = () =>
    outboxMessage(
      BusMessages.sendEmail,
      commandOfOneCopy({
        ref_id: ulid(),
        tenant_id: 'ten_01JBENCHPUBLISH00000000000',
        copy_id: ulid(),
        attempt: 1,
      }),
      { tenantId: 'ten_01JBENCHPUBLISH00000000000' },
    );
  const run = async (n: number) => {
    const rows = Array.from({ length: n }, row);
    const cpu0 = process.cpuUsage();
    const w0 = syscw();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < rows.length; i += BATCH) {
      await Promise.all(
        rows.slice(i, i + BATCH).map((r) => bus.publish(r.exchange, r.routingKey, r.envelope)),
      );
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    await ch.purgeQueue('bench.send');
    return {
      cpu_us_per_message: Math.round(((cpu.user + cpu.system) / n) * 10) / 10,
      writes_per_message: Math.round(((syscw() - w0) / n) * 1000) / 1000,
      messages_per_sec: Math.round(n / seconds),
    };
  };
  try {
    await run(Math.min(MESSAGES, 5_000));
    const runs = [];
    for (let r = 0; r < REPEATS; r++) runs.push(await run(MESSAGES));
    const best = runs.reduce((a, b) => (b.cpu_us_per_message < a.cpu_us_per_message ? b : a));
    console.log(
      JSON.stringify({ benchmark: 'publish', messages: MESSAGES, batch: BATCH, best, runs }, null, 2),
    );
  } finally {
    await admin.close();
    await bus.close();
    await vhost.drop();
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
