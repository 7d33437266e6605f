import type { Server } from 'node:http';
import type { Express } from 'express';

/**
 * Ports bound early by `holdPort` while the process waits for its dependencies (answering
 * /healthz and /readyz meanwhile). `listen` on a held port takes the bound server over instead
 * of binding again: no gap in which the port refuses connections, no race for it.
 */
const heldPorts = new Map<number, Server>();

/** Listens on `port` (0 = any free port) and resolves with the bound server. */
export function listen(app: Express, port: number, host = '0.0.0.0'): Promise<Server> {
  const held = port ? heldPorts.get(port) : undefined;
  if (held) {
    heldPorts.delete(port);
    held.removeAllListeners('request');
    held.on('request', app);
    return Promise.resolve(held);
  }
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
    server.keepAliveTimeout = 65_000;
  });
}

/** Binds `port` now with a stand-in app; a later `listen` on the same port takes the server over. */
export async function holdPort(app: Express, port: number, host = '0.0.0.0'): Promise<Server> {
  const server = await listen(app, port, host);
  heldPorts.set(port, server);
  return server;
}

/** Closes the held ports nobody took over. */
export async function releaseHeldPorts(): Promise<void> {
  const servers = [...heldPorts.values()];
  heldPorts.clear();
  await Promise.all(servers.map(closeServer));
}

/** Stops accepting, lets in-flight requests finish, drops idle keep-alive sockets. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

export function boundPort(server: Server): number {
  const addr = server.address();
  return typeof addr === 'object' && addr ? addr.port : 0;
}
