/**
 * The bus floor: RabbitMQ carrying exactly the messages the store floor's relay took from the
 * outbox (the `send.email` commands, one per single send or per 100 batch copies, and the
 * `email.event` version-2 messages of the event writer), with amqplib doing the minimum the
 * design needs: a publisher connection on a confirm channel publishing persistent messages to the
 * topic exchange in batches of 100 (the relay's batch) and awaiting the confirms of each batch; a
 * consumer connection (prefetch 100, manual acks) acking every message once, the messages of one
 * event-loop turn with one `basic.ack multiple` (the services' ack window); a durable queue bound
 * as the services' are, in a vhost of its own. The list is published `repeat` times so the
 * broker's 10 ms CPU ticks resolve.
 *
 * Per email: this process's CPU (amqplib on both sides; the relay's and the consumer's share of
 * the services) and RabbitMQ's (the server's `beam.smp`, not rabbitmqctl's; the whole shared broker: other sessions' load is in
 * it, so the broker's CPU is also read for as long again (at most 5 s) right after, while
 * this floor is idle, and reported as `rabbitmq_background`; the floor takes the difference, clamped at 0).
 * Leaves out: the envelope's validation on consumption (zod / plain checks), tracing, the
 * services' bus bookkeeping (reconnects, retries, dead letters), and the email events' consumer
 * (the webhook dispatcher, when one runs).
 */
import { loadavg } from 'node:os';
import { createTestVhost } from '@mailyard/testkit/servers';
import amqplib from 'amqplib';
import { cpuMsOf, rabbitmqServerPids } from '../support/cpu';
import type { RelayedMessage } from './store-floor';

const BATCH = 100;
const r4 = (n: number) => Math.round(n * 10000) / 10000;
const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const brokerCpuMs = () => rabbitmqServerPids().reduce((s, p) => s + (cpuMsOf(p) ?? 0), 0);

/** The broker's CPU over `ms` of wall time while this process does nothing with it. */
async function brokerIdle(ms: number): Promise<number> {
  const b0 = brokerCpuMs();
  await new Promise((r) => setTimeout(r, ms));
  return brokerCpuMs() - b0;
}

export async function busFloor(messages: RelayedMessage[], emails: number, repeat: number) {
  const vhost = createTestVhost();
  const pub = await amqplib.connect(vhost.url);
  const sub = await amqplib.connect(vhost.url);
  try {
    const ch = await pub.createConfirmChannel();
    const queue = 'floors.bus';
    await ch.assertQueue(queue, { durable: true });
    for (const exchange of new Set(messages.map((m) => m.exchange))) {
      await ch.assertExchange(exchange, 'topic', { durable: true });
      await ch.bindQueue(queue, exchange, '#');
    }
    const bodies = messages.map((m) => ({
      exchange: m.exchange,
      routingKey: m.routing_key,
      // As the relay sends it: the row's JSON (pg parsed the jsonb column) serialized again.
      content: () => Buffer.from(JSON.stringify(m.message)),
    }));
    const consumer = await sub.createChannel();
    await consumer.prefetch(BATCH);
    let received = 0;
    let last: amqplib.ConsumeMessage | null = null;
    let flushing = false;
    let done: () => void = () => {};
    const target = { n: 0 };
    await consumer.consume(
      queue,
      (msg) => {
        if (!msg) return;
        JSON.parse(msg.content.toString('utf8')); // the consumer reads the envelope
        received++;
        last = msg;
        if (!flushing) {
          flushing = true;
          setImmediate(() => {
            flushing = false;
            if (last) consumer.ack(last, true);
            last = null;
            if (received >= target.n) done();
          });
        }
      },
      { noAck: false },
    );
    const run = async (times: number) => {
      target.n = received + times * bodies.length;
      const finished = new Promise<void>((r) => {
        done = r;
      });
      for (let t = 0; t < times; t++) {
        for (let i = 0; i < bodies.length; i += BATCH) {
          for (const b of bodies.slice(i, i + BATCH))
            ch.publish(b.exchange, b.routingKey, b.content(), {
              persistent: true,
              contentType: 'application/json',
            });
          await ch.waitForConfirms();
        }
      }
      await finished;
    };
    await run(1); // warm-up
    const b0 = brokerCpuMs();
    const c0 = selfCpuMs();
    const t0 = performance.now();
    await run(repeat);
    const wallMs = performance.now() - t0;
    const clientMs = selfCpuMs() - c0;
    const brokerMs = brokerCpuMs() - b0;
    // The broker's background (other sessions) over a window as long as the run, right after it.
    const idle = (await brokerIdle(Math.min(wallMs, 5000))) / Math.min(wallMs, 5000);
    const idleMs = idle * wallMs;
    const n = emails * repeat;
    return {
      messages_per_email: r4(messages.length / emails),
      messages: messages.length * repeat,
      emails: n,
      messages_per_sec: Math.round((messages.length * repeat) / (wallMs / 1000)),
      amqp_client_cpu_ms_per_email: r4(clientMs / n),
      rabbitmq_raw_cpu_ms_per_email: r4(brokerMs / n),
      rabbitmq_background_cpu_ms_per_sec: Math.round(idle * 1000),
      rabbitmq_cpu_ms_per_email: r4(Math.max(0, brokerMs - idleMs) / n),
      loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
    };
  } finally {
    await pub.close().catch(() => {});
    await sub.close().catch(() => {});
    await vhost.drop();
  }
}
