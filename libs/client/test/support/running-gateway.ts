/**
 * A real gateway listening on a free port (embedded stores) for the client tests: the client
 * talks HTTP to it exactly as it would to a deployed gateway.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestGateway, createStores, startGateway } from '@mailyard/gateway/test/support/harness';

export interface Running {
  gw: TestGateway;
  server: Server;
  url: string;
}

export async function listen(env: Record<string, string> = {}): Promise<Running> {
  const gw = await startGateway(await createStores('embedded'), { WEBHOOK_ALLOW_INSECURE: '1', ...env });
  const server = gw.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { gw, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export async function stop(r: Running | undefined): Promise<void> {
  if (!r) return;
  r.server.closeAllConnections();
  await new Promise((res) => r.server.close(res));
  await r.gw.close();
}
