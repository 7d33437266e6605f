/**
 * The guarded connect (docs/architecture.md "Outbound connections") against a real dnsmasq and real TCP,
 * HTTP and HTTPS servers on loopback: refused targets open no TCP connection at all, refusals
 * never carry the address, the opt-out connects to the address that was checked (one DNS
 * resolution, no second one by the client), and TLS is verified against the name.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  OutboundTargetError,
  guardedAgent,
  guardedAgents,
  guardedConnect,
  guardedRequest,
  resolveGuarded,
} from '@mailyard/platform';
import { type Dnsmasq, startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import { REPO_ROOT } from '@mailyard/testkit/process';

jest.setTimeout(60_000);

let dns: Dnsmasq;
const dnsConfig = () => ({ DNS_SERVERS: [dns.server], DNS_TIMEOUT_MS: 1000, DNS_TRIES: 1 });

/** A TCP server on `host` counting every connection it accepts. */
async function countingServer(host = '127.0.0.1', port = 0) {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    connections++;
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
    s.end('hello\r\n');
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

beforeAll(async () => {
  dns = await startDnsmasq({
    a: [
      { name: 'loop.test', ip: '127.0.0.1' },
      { name: 'ten.test', ip: '10.1.2.3' },
      { name: 'meta.test', ip: '169.254.169.254' },
      { name: 'cgnat.test', ip: '100.64.1.1' },
      // rebinding-style: a public answer beside an internal one
      { name: 'mixed.test', ip: '93.184.216.34,::1' },
      { name: 'public.test', ip: '93.184.216.34' },
      // AAAA answers carrying a loopback IPv4 (SIIT, NAT64, 6to4): judged by that address
      { name: 'siit.test', ip: '::ffff:0:7f00:1' },
      { name: 'nat64.test', ip: '64:ff9b::a9fe:a9fe' },
      { name: 'sixtofour.test', ip: '2002:7f00:1::1' },
    ],
  });
});
afterAll(async () => {
  await dns?.stop();
});

describe('resolveGuarded', () => {
  it.each([
    ['loop.test', 'ETARGET_PRIVATE'],
    ['LOOP.test.', 'ETARGET_PRIVATE'],
    ['ten.test', 'ETARGET_PRIVATE'],
    ['meta.test', 'ETARGET_PRIVATE'],
    ['cgnat.test', 'ETARGET_PRIVATE'],
    ['mixed.test', 'ETARGET_PRIVATE'],
    ['localhost', 'ETARGET_PRIVATE'],
    ['localhost.', 'ETARGET_PRIVATE'],
    ['127.0.0.1.', 'ETARGET_PRIVATE'],
    ['[::1]', 'ETARGET_PRIVATE'],
    ['::ffff:127.0.0.1', 'ETARGET_PRIVATE'],
    ['169.254.169.254', 'ETARGET_PRIVATE'],
    ['siit.test', 'ETARGET_PRIVATE'],
    ['nat64.test', 'ETARGET_PRIVATE'],
    ['sixtofour.test', 'ETARGET_PRIVATE'],
    // IPv4-embedding literals as a user writes a host: brackets, upper case, zone ids
    ['[::ffff:0:127.0.0.1]', 'ETARGET_PRIVATE'],
    ['[::FFFF:7F00:1]', 'ETARGET_PRIVATE'],
    ['[64:FF9B::169.254.169.254]', 'ETARGET_PRIVATE'],
    ['[2002:a00:1::]', 'ETARGET_PRIVATE'],
    ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', 'ETARGET_PRIVATE'],
    ['[fe80::5efe:10.0.0.1]', 'ETARGET_PRIVATE'],
    ['[fe80::1%eth0]', 'ETARGET_PRIVATE'],
    ['[2606:4700:4700::1111%eth0]', 'ETARGET_PRIVATE'],
    ['metadata.google.internal', 'ETARGET_UNRESOLVED'],
    ['nothing.test', 'ETARGET_UNRESOLVED'],
  ])('refuses %s (%s) without naming the address', async (host, code) => {
    const err = await resolveGuarded(host, { allowPrivate: false, dns: dnsConfig() }).catch((e) => e);
    expect(err).toBeInstanceOf(OutboundTargetError);
    expect(err).toMatchObject({ code, host });
    expect(err.message).toContain(host);
    for (const address of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '100.64.1.1', '93.184.216.34'])
      if (!host.includes(address)) expect(err.message).not.toContain(address);
  });

  it('answers the checked address of a public name, and of a private one only when allowed', async () => {
    expect(await resolveGuarded('public.test', { allowPrivate: false, dns: dnsConfig() })).toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    // The same forms carrying a public address pass.
    expect(await resolveGuarded('[::FFFF:0:808:808]', { allowPrivate: false })).toEqual({
      address: '::ffff:0:808:808',
      family: 6,
    });
    expect(await resolveGuarded('[64:ff9b::8.8.8.8]', { allowPrivate: false })).toEqual({
      address: '64:ff9b::8.8.8.8',
      family: 6,
    });
    expect(await resolveGuarded('loop.test', { allowPrivate: true, dns: dnsConfig() })).toEqual({
      address: '127.0.0.1',
      family: 4,
    });
    // a name that does not resolve is refused even when private targets are allowed
    await expect(
      resolveGuarded('nothing.test', { allowPrivate: true, dns: dnsConfig() }),
    ).rejects.toMatchObject({
      code: 'ETARGET_UNRESOLVED',
    });
  });

  it('marks a DNS server that does not answer as a temporary refusal', async () => {
    const err = await resolveGuarded('public.test', {
      allowPrivate: false,
      dns: { DNS_SERVERS: ['127.0.0.1:9'], DNS_TIMEOUT_MS: 200, DNS_TRIES: 1 },
    }).catch((e) => e);
    expect(err).toMatchObject({ code: 'ETARGET_UNRESOLVED', temporary: true });
  });
});

describe('guardedConnect', () => {
  it('opens no TCP connection to a refused target', async () => {
    const server = await countingServer();
    try {
      for (const host of ['loop.test', '127.0.0.1', 'localhost', 'mixed.test', '[::ffff:127.0.0.1]']) {
        const err = await guardedConnect({
          host,
          port: server.port,
          allowPrivate: false,
          timeoutMs: 2000,
          dns: dnsConfig(),
        }).catch((e) => e);
        expect(err).toMatchObject({ code: 'ETARGET_PRIVATE' });
      }
      // a checked address handed in by the caller (MX) is checked too
      await expect(
        guardedConnect({
          host: 'mx.test',
          address: '127.0.0.1',
          port: server.port,
          allowPrivate: false,
          timeoutMs: 2000,
        }),
      ).rejects.toMatchObject({ code: 'ETARGET_PRIVATE' });
      expect(server.connections()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('with the opt-out, resolves once and connects to the checked address only', async () => {
    // Two servers on one port: 127.0.0.2 is what the name resolves to first, 127.0.0.1 after.
    const first = await countingServer('127.0.0.2');
    const later = await countingServer('127.0.0.1', first.port);
    let lookups = 0;
    const rebinding = {
      async resolve4() {
        lookups++;
        return lookups === 1 ? ['127.0.0.2'] : ['127.0.0.1'];
      },
      async resolve6(): Promise<string[]> {
        throw Object.assign(new Error('no AAAA'), { code: 'ENODATA' });
      },
    } as unknown as import('node:dns/promises').Resolver;
    try {
      const socket = await guardedConnect({
        host: 'rebind.test',
        port: first.port,
        allowPrivate: true,
        timeoutMs: 5000,
        dns: rebinding,
      });
      const remote = socket.remoteAddress;
      socket.destroy();
      expect(remote).toBe('127.0.0.2');
      expect(lookups).toBe(1);
      expect(first.connections()).toBe(1);
      expect(later.connections()).toBe(0);
    } finally {
      await first.close();
      await later.close();
    }
  });

  it('reports a refused connection with the host and code, never the address', async () => {
    const closed = await countingServer();
    const port = closed.port;
    await closed.close();
    const err = await guardedConnect({
      host: 'loop.test',
      port,
      allowPrivate: true,
      timeoutMs: 5000,
      dns: dnsConfig(),
    }).catch((e) => e);
    expect(err).toMatchObject({ code: 'ETARGET_CONNECT', causeCode: 'ECONNREFUSED', temporary: true });
    expect(err.message).toBe(`Could not connect to loop.test:${port} (ECONNREFUSED)`);
  });
});

describe('HTTP(S) agents and guardedRequest', () => {
  let server: http.Server;
  let secure: https.Server;
  let connections = 0;
  let ca: string;

  beforeAll(async () => {
    const certFile = execFileSync('bash', [join(REPO_ROOT, 'libs/testkit/peers/test-ca.sh')])
      .toString()
      .trim();
    ca = readFileSync(certFile, 'utf8');
    const key = readFileSync(certFile.replace(/cert\.pem$/, 'key.pem'), 'utf8');
    const handler: http.RequestListener = (_req, res) => res.end('ok');
    server = http.createServer(handler);
    secure = https.createServer({ cert: ca, key }, handler);
    for (const s of [server, secure]) {
      s.on('connection', () => connections++);
      await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    }
  });
  afterAll(async () => {
    for (const s of [server, secure]) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  const get = (url: string, options: http.RequestOptions) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const mod = url.startsWith('https') ? https : http;
      mod
        .get(url, options, (res) => {
          let body = '';
          res.on('data', (d) => {
            body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        })
        .on('error', reject);
    });
  const portOf = (s: http.Server) => (s.address() as AddressInfo).port;

  it('refuses private names and IP literals before connecting', async () => {
    const before = connections;
    const agent = guardedAgent({ https: false, allowPrivate: false, dns: dnsConfig() });
    for (const host of ['loop.test', '127.0.0.1', 'localhost', '[::1]']) {
      const err = await get(`http://${host}:${portOf(server)}/`, { agent }).catch((e) => e);
      expect(err).toBeInstanceOf(OutboundTargetError);
      expect(err.code).toBe('ETARGET_PRIVATE');
    }
    expect(connections).toBe(before);
    agent.destroy();
  });

  it('with the opt-out connects, and checks the certificate against the name', async () => {
    const agent = guardedAgent({ https: false, allowPrivate: true, dns: dnsConfig() });
    expect(await get(`http://loop.test:${portOf(server)}/`, { agent })).toEqual({ status: 200, body: 'ok' });
    const tlsAgent = guardedAgent({ https: true, allowPrivate: true, dns: dnsConfig(), agent: { ca } });
    expect(await get(`https://localhost:${portOf(secure)}/`, { agent: tlsAgent })).toEqual({
      status: 200,
      body: 'ok',
    });
    // loop.test resolves to 127.0.0.1, which the certificate names; the name loop.test it does not.
    const err = await get(`https://loop.test:${portOf(secure)}/`, { agent: tlsAgent }).catch((e) => e);
    expect(err.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(err.message).not.toContain('127.0.0.1');
    agent.destroy();
    tlsAgent.destroy();
  });

  it('guardedRequest sends through the guarded agents only, and they refuse IP literals', async () => {
    const agents = guardedAgents({ allowPrivate: false, dns: dnsConfig() });
    const before = connections;
    const refused = await new Promise<unknown>((resolve) => {
      const req = guardedRequest(new URL(`http://127.0.0.1:${portOf(server)}/`), { method: 'GET' }, agents);
      req.on('error', resolve).on('response', () => resolve(null));
      req.end();
    });
    expect(refused).toMatchObject({ code: 'ETARGET_PRIVATE' });
    expect(connections).toBe(before);
    const plain = { http: new http.Agent(), https: new https.Agent() };
    expect(() => guardedRequest(new URL('http://example.com/'), {}, plain)).toThrow(TypeError);
    expect(() =>
      guardedRequest(new URL('https://example.com/'), {}, { ...agents, https: agents.http }),
    ).toThrow(TypeError);
    agents.http.destroy();
    agents.https.destroy();
  });
});
