import type { Server } from 'node:http';
import type { Express } from 'express';

/** Listens on `port` (0 = any free port) and resolves with the bound server. */
export function listen(app: Express, port: number, host = '0.0.0.0'): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
    server.keepAliveTimeout = 65_000;
  });
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
