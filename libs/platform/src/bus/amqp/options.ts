import type { QueueDeclaration } from '@mailyard/contracts';

export interface AmqpBusOptions {
  /** How long the first connection may take, retries included (default 30 s). */
  connectTimeoutMs?: number;
  /** How long `publish`/`consume` wait for a lost connection to come back (default 30 s). */
  publishTimeoutMs?: number;
  /** How long a publish waits for the broker's confirm (default 30 s). */
  confirmTimeoutMs?: number;
  /** Reconnect backoff: first delay and cap (defaults 100 ms and 5 s), with jitter. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** AMQP heartbeat in seconds unless the URL sets `heartbeat` (default 10). */
  heartbeatSeconds?: number;
  /** Shown by `rabbitmqctl list_connections client_properties` (default "mailyard"). */
  connectionName?: string;
  /** Work queues (and bindings) declared on every (re)connect, before anything is published. */
  queues?: readonly QueueDeclaration[];
}

export type AmqpSettings = Required<AmqpBusOptions>;

export function withDefaults(opts: AmqpBusOptions): AmqpSettings {
  return {
    connectTimeoutMs: opts.connectTimeoutMs ?? 30_000,
    publishTimeoutMs: opts.publishTimeoutMs ?? 30_000,
    confirmTimeoutMs: opts.confirmTimeoutMs ?? 30_000,
    reconnectMinMs: opts.reconnectMinMs ?? 100,
    reconnectMaxMs: opts.reconnectMaxMs ?? 5_000,
    heartbeatSeconds: opts.heartbeatSeconds ?? 10,
    connectionName: opts.connectionName ?? 'mailyard',
    queues: opts.queues ?? [],
  };
}
