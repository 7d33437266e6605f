/** Broker-wide actions for the reconnect tests. They disturb the shared broker: run those files serially. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function rabbitmqctl(...args: string[]): Promise<string> {
  const { stdout } = await run('rabbitmqctl', ['-q', ...args], { timeout: 120_000 });
  return stdout;
}

/** Closes every client connection of one vhost, as an operator or a network blip would. */
export async function closeVhostConnections(vhost: string): Promise<void> {
  await rabbitmqctl('close_all_connections', '-p', vhost, 'mailyard test: connection loss');
}

/** Stops the RabbitMQ application; `whileDown` runs before it is started again. */
export async function restartBroker(whileDown: () => Promise<void> = async () => {}): Promise<void> {
  await rabbitmqctl('stop_app');
  try {
    await whileDown();
  } finally {
    await rabbitmqctl('start_app');
    await rabbitmqctl('await_startup');
  }
}

/**
 * Closes the client connections named `connectionName` (AmqpBusOptions.connectionName) and no
 * other: one process's link dies, the broker and everyone else's connections stay up.
 */
export async function closeNamedConnections(connectionName: string): Promise<number> {
  const listing = await rabbitmqctl('list_connections', 'pid', 'client_properties');
  const ours = listing
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${connectionName}"}`))
    .map((line) => line.split('\t')[0]!);
  for (const pid of ours) await rabbitmqctl('close_connection', pid, 'mailyard test: connection closed');
  return ours.length;
}
