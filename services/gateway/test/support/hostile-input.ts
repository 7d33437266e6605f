import { Agent } from 'node:http';
import { closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { eventually } from '@mailyard/testkit/eventually';
import { createSharedStores } from '@mailyard/testkit/stores';
import { buildGatewayApp } from '../../src/app';
import { type RouteInfo, fuzzRequest, listRoutes, prng } from './fuzz';
import { type LiveGateway, probeHealth, rawRequest, rssBytes, startLiveGateway } from './live-gateway';

/**
 * Issue 7 "proof that stays in the project": the gateway process as production runs it, on the
 * real servers, under hostile input. FUZZ_REQUESTS and FUZZ_SEED replay or lengthen a run.
 */
const KEY = 'myk_hostileinputtestkey0000000000000000000000';
const ADMIN = 'admin-key-for-hostile-input-test-000';
const fuzzRequests = (fallback: number) => Number(process.env.FUZZ_REQUESTS ?? fallback);
const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const MB = 1024 * 1024;

export function describeHostileInput(mode: 'servers' | 'embedded', defaultRequests: number): void {
  const FUZZ_REQUESTS = fuzzRequests(defaultRequests);
  describe(`hostile input against the gateway process (${mode})`, () => {
    let gw: LiveGateway;
    let routes: RouteInfo[];
    let drop: () => Promise<void>;

    beforeAll(async () => {
      // Embedded: PGlite in memory, in-process bus and kv; servers: a fresh database and vhost.
      const stores = await createSharedStores(mode);
      drop = stores.drop;
      const env = {
        ...stores.env,
        BOOTSTRAP_API_KEY: KEY,
        ADMIN_API_KEY: ADMIN,
        RATE_LIMIT_STANDARD: '10000000',
        // Hosts of fuzzed mailers fail fast; nothing is dialled on the internet.
        DNS_SERVERS: '127.0.0.1:9',
        DNS_TIMEOUT_MS: '300',
        DNS_TRIES: '1',
        SMTP_VERIFY_TIMEOUT_MS: '1000',
        IMAP_VERIFY_TIMEOUT_MS: '1000',
      };
      gw = await startLiveGateway(env);
      // The routes come from the app itself, so a route added later is fuzzed without editing this test.
      const ctx = await openContext(
        configFrom({ ...env, DATA_DIR: 'memory://', LOG_LEVEL: 'error' }),
        createLogger('fuzz-routes', 'error'),
      );
      routes = listRoutes(buildGatewayApp(ctx));
      await closeContext(ctx);
    });

    afterAll(async () => {
      await gw?.stop();
      await drop?.();
    });

    const alive = () => gw.process.child.exitCode === null && gw.process.child.signalCode === null;

    /**
     * Streams `size` bytes of `[{},{},...]` in 1 MB writes, as a client uploading a large body
     * would; `sentAtAnswer` is how much of it had been handed to the socket when the answer came.
     */
    async function uploadArray(path: string, size: number, headers: Record<string, string>) {
      const { request } = await import('node:http');
      const url = new URL(gw.url);
      let sent = 1;
      return new Promise<{ status: number; text: string; sentAtAnswer: number }>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            method: 'POST',
            path,
            headers: { 'Content-Type': 'application/json', 'Content-Length': String(size), ...headers },
          },
          (res) => {
            const sentAtAnswer = sent;
            let text = '';
            res.on('data', (c) => {
              text += c;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text, sentAtAnswer }));
          },
        );
        req.on('error', reject);
        const chunk = Buffer.from('{},'.repeat(MB / 3));
        req.write('[');
        const pump = () => {
          while (sent + chunk.length < size - 3) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          const rest = '{}]'.padStart(size - sent, ' ');
          sent = size;
          req.end(rest);
        };
        pump();
      });
    }

    it('an unauthenticated 41 MB body is refused before it is read: /healthz answers and memory stays flat', async () => {
      const before = rssBytes(gw.pid);
      const probe = probeHealth(gw.url);
      const res = await uploadArray('/v1/email/send', 41 * MB, {});
      // Keep probing just after the upload: three more answers.
      const answered = probe.answered();
      await eventually(() => probe.answered() >= answered + 3, 'three /healthz answers after the upload');
      const health = await probe.stop();
      expect(res.status).toBe(401);
      expect(JSON.parse(res.text)).toEqual({ success: false, error: 'Invalid or missing API key' });
      // Answered before the client had sent the body: it was neither buffered nor parsed (before
      // the fix it was, and /healthz waited 12-33 s).
      expect(res.sentAtAnswer).toBeLessThan(41 * MB);
      expect(health.failures).toEqual([]);
      // Before the fix: +1.2 GB. The body is dropped as it streams in.
      expect(rssBytes(gw.pid) - before).toBeLessThan(150 * MB);
      expect(alive()).toBe(true);
    });

    it('an authenticated 41 MB body of [{},{},...] on the send route stops at the value limit', async () => {
      const before = rssBytes(gw.pid);
      const probe = probeHealth(gw.url);
      const res = await uploadArray('/v1/email/send', 41 * MB, { Authorization: `Bearer ${KEY}` });
      const health = await probe.stop();
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text)).toEqual({
        success: false,
        error: 'JSON body has too many values (at most 100000)',
      });
      // Refused at the value limit, while the rest of the body was still being sent.
      expect(res.sentAtAnswer).toBeLessThan(41 * MB);
      expect(health.failures).toEqual([]);
      expect(health.probes).toBeGreaterThan(0);
      expect(rssBytes(gw.pid) - before).toBeLessThan(150 * MB);
    });

    it(`fuzzes every route (${FUZZ_REQUESTS} requests, seed ${FUZZ_SEED}): no 500, envelopes, alive, /healthz answering`, async () => {
      const paths = new Set(routes.map((r) => r.path));
      for (const p of [
        '/v1/email/send',
        '/v1/email/template/:id',
        '/v1/email/logs',
        '/v1/mailer/:mailer_id',
        '/admin/v1/tenants',
        '/v1/domains',
      ])
        expect(paths).toContain(p);
      const rnd = prng(FUZZ_SEED);
      const requests = Array.from({ length: FUZZ_REQUESTS }, (_, i) =>
        fuzzRequest(rnd, routes[i % routes.length]!, { tenant: KEY, admin: ADMIN }),
      );
      const agent = new Agent({ keepAlive: true, maxSockets: 4 });
      const probe = probeHealth(gw.url, 200);
      const serverErrors: string[] = [];
      const notEnvelopes: string[] = [];
      const statuses = new Map<number, number>();
      let next = 0;
      const worker = async () => {
        while (next < requests.length) {
          const req = requests[next++]!;
          const res = await rawRequest(gw.url, req, agent, 60_000);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const what = `${req.method} ${req.path.slice(0, 120)} ${JSON.stringify(req.headers)} body ${req.body?.subarray(0, 200).toString('latin1')}`;
          if (res.status >= 500) serverErrors.push(`${res.status} ${what} -> ${res.text.slice(0, 200)}`);
          else if (res.status >= 400 && !/^\/(healthz|readyz)/.test(req.path)) {
            const body = (() => {
              try {
                return JSON.parse(res.text);
              } catch {
                return null;
              }
            })();
            if (!(body?.success === false && typeof body.error === 'string' && body.error.length > 0))
              notEnvelopes.push(`${res.status} ${what} -> ${res.text.slice(0, 200)}`);
          }
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      agent.destroy();
      const health = await probe.stop();
      process.stdout.write(
        `fuzz: ${requests.length} requests over ${routes.length} routes; statuses ${JSON.stringify(Object.fromEntries(statuses))}; /healthz ${health.probes} probes, slowest ${health.maxLatencyMs} ms\n`,
      );
      expect(serverErrors).toEqual([]);
      expect(notEnvelopes).toEqual([]);
      expect(alive()).toBe(true);
      // Every probe made during the run was answered 200 (the slowest is printed above).
      expect(health.probes).toBeGreaterThan(0);
      expect(health.failures).toEqual([]);
      expect((await rawRequest(gw.url, { method: 'GET', path: '/healthz' })).status).toBe(200);
      expect(gw.process.output()).not.toMatch(/unhandled|uncaught/i);
    });
  });
}
