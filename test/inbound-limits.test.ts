/**
 * The MX service's connection limits and idle timeout over raw TCP sessions from several loopback
 * addresses: INBOUND_MAX_PER_IP (our onConnect: `421 4.7.0` beyond it, counted per address and
 * released when a session closes, refused ones included), INBOUND_MAX_CLIENTS (smtp-server's own
 * `421 ... Too many connected clients`), INBOUND_SOCKET_TIMEOUT_MS (an idle session, also one in
 * the middle of DATA, gets `421 Timeout` and is closed; a half-received message is not stored),
 * INBOUND_GREETING_DELAY_MS (a client talking before the greeting gets 421; 0 greets at once),
 * INBOUND_DATA_TIMEOUT_MS and INBOUND_SESSION_TIMEOUT_MS (clients that never go idle, trickling a
 * byte at a time inside DATA or sending NOOPs, are cut with `421 4.4.2`; while they hold slots an
 * honest client from another address is served and its message posted).
 */
import { eventually } from '@mailyard/testkit/eventually';
import { type InboundHarness, startInbound } from './support/inbound';
import { type SmtpSession as Session, openSession as open, openInData } from './support/smtp-session';

jest.setTimeout(120_000);

const DOMAIN = 'limits.example.com';

async function storedCount(h: InboundHarness): Promise<number> {
  const { rows } = await h.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM inbound_messages');
  return rows[0]!.n;
}

describe('connection limits (INBOUND_MAX_PER_IP=2, INBOUND_MAX_CLIENTS=4)', () => {
  let h: InboundHarness;
  const sessions: Session[] = [];
  /** A session from `ip` and its greeting (220, or the refusal). */
  const greet = async (ip: string): Promise<{ s: Session; greeting: string }> => {
    const s = await open(h.port, ip);
    sessions.push(s);
    return { s, greeting: await s.reply() };
  };

  beforeAll(async () => {
    h = await startInbound({
      env: { INBOUND_MAX_PER_IP: '2', INBOUND_MAX_CLIENTS: '4' },
      domains: [{ domain: DOMAIN, wildcard: true }],
    });
  });
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await h?.stop();
  });

  test('per IP: the third session from one address gets 421 and is closed; other addresses still get in', async () => {
    const a1 = await greet('127.0.0.1');
    const a2 = await greet('127.0.0.1');
    expect([a1.greeting, a2.greeting]).toEqual([
      expect.stringMatching(/^220 /),
      expect.stringMatching(/^220 /),
    ]);
    const a3 = await greet('127.0.0.1');
    expect(a3.greeting).toBe('421 4.7.0 Too many connections from your address');
    await a3.s.closed; // the server hung up

    // the refused session closing must not free a slot: still two open from 127.0.0.1
    const a4 = await greet('127.0.0.1');
    expect(a4.greeting).toMatch(/^421 4\.7\.0 /);
    await a4.s.closed;

    expect((await greet('127.0.0.2')).greeting).toMatch(/^220 /);

    // one of the two leaves: a new session from 127.0.0.1 is let in again
    await a1.s.close();
    const a5 = await eventually(async () => {
      const g = await greet('127.0.0.1');
      return g.greeting.startsWith('220') ? g : null;
    }, 'a slot for 127.0.0.1 after one session closed');
    a5.s.send('EHLO client.example.org');
    expect(await a5.s.reply()).toMatch(/^250 /);
  });

  test('server-wide: the fifth concurrent session gets smtp-server 421 "Too many connected clients"', async () => {
    // leftovers of the previous test may take a moment to be seen closed by the server
    for (const ip of ['127.0.1.1', '127.0.1.2', '127.0.1.3', '127.0.1.4'])
      await eventually(async () => {
        const g = await greet(ip);
        return g.greeting.startsWith('220');
      }, `a session from ${ip}`);
    const fifth = await greet('127.0.1.5');
    expect(fifth.greeting).toMatch(/^421 \S+ Too many connected clients, try again in a moment$/);
    await fifth.s.closed;
  });
});

describe('idle timeout (INBOUND_SOCKET_TIMEOUT_MS=1000)', () => {
  let h: InboundHarness;
  beforeAll(async () => {
    h = await startInbound({
      env: { INBOUND_SOCKET_TIMEOUT_MS: '1000' },
      domains: [{ domain: DOMAIN, wildcard: true }],
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  test('a session that says nothing after the greeting gets 421 and is closed', async () => {
    const s = await open(h.port, '127.0.0.1');
    expect(await s.reply()).toMatch(/^220 /);
    expect(await s.reply()).toBe('421 Timeout - closing connection');
    await s.closed;
  });

  test('a client stalling in the middle of DATA is cut off and nothing is stored', async () => {
    const before = await storedCount(h);
    const s = await openInData(h.port, [`x@${DOMAIN}`]);
    s.send('Subject: half\r\n\r\nthe first half of a message');
    expect(await s.reply()).toBe('421 Timeout - closing connection');
    await s.closed;
    expect(await storedCount(h)).toBe(before);
    // the service is fine afterwards
    const out = await h.swaks([
      '--to',
      `y@${DOMAIN}`,
      '--from',
      'a@example.org',
      '--header',
      'Subject: after',
    ]);
    expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
  });
});

describe('greeting delay (INBOUND_GREETING_DELAY_MS, early talkers)', () => {
  let waiting: InboundHarness;
  let immediate: InboundHarness;
  beforeAll(async () => {
    // long enough that the client's first line surely arrives before the greeting
    waiting = await startInbound({
      env: { INBOUND_GREETING_DELAY_MS: '60000' },
      domains: [{ domain: DOMAIN, wildcard: true }],
    });
    immediate = await startInbound({ domains: [{ domain: DOMAIN, wildcard: true }] });
  });
  afterAll(async () => {
    await Promise.all([waiting?.stop(), immediate?.stop()]);
  });

  test('with a delay, a client that talks before the greeting gets 421 "You talk too soon"', async () => {
    const s = await open(waiting.port, '127.0.0.1');
    s.send('EHLO early.example.org');
    expect(await s.reply()).toMatch(/^421 \S+ You talk too soon$/);
    await s.close();
  });

  test('by default (0) the greeting is sent at once: nothing a client sends comes too early', async () => {
    const s = await open(immediate.port, '127.0.0.1');
    s.send('EHLO early.example.org');
    expect(await s.reply()).toMatch(/^220 /);
    expect(await s.reply()).toMatch(/^250 /);
    await s.close();
  });
});

describe('slow sessions: deadlines and per-address slots (INBOUND_DATA_TIMEOUT_MS=3000, INBOUND_SESSION_TIMEOUT_MS=6000)', () => {
  let h: InboundHarness;
  beforeAll(async () => {
    h = await startInbound({
      env: {
        INBOUND_MAX_CLIENTS: '5',
        INBOUND_MAX_PER_IP: '2',
        INBOUND_DATA_TIMEOUT_MS: '3000',
        INBOUND_SESSION_TIMEOUT_MS: '6000',
      },
      domains: [{ domain: DOMAIN, wildcard: true }],
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** A session from `ip` inside DATA that sends one byte every 200 ms (never idle). */
  async function trickler(ip: string): Promise<{ s: Session; stop(): void }> {
    const s = await openInData(h.port, [`slow@${DOMAIN}`], ip);
    s.send('Subject: slow');
    const timer = setInterval(() => {
      if (!s.socket.destroyed) s.socket.write('x');
    }, 200);
    void s.closed.then(() => clearInterval(timer));
    return { s, stop: () => clearInterval(timer) };
  }

  test('tricklers hold slots from two addresses; an honest client elsewhere is served; the DATA deadline cuts them, nothing stored', async () => {
    const before = await storedCount(h);
    const slow = await Promise.all(['127.0.2.2', '127.0.2.2', '127.0.2.3', '127.0.2.3'].map(trickler));
    try {
      // a third session from a trickling address is refused: one address cannot take every slot
      const third = await open(h.port, '127.0.2.2');
      expect(await third.reply()).toBe('421 4.7.0 Too many connections from your address');
      await third.closed;
      // the honest client, from another address, while all four trickle
      const subject = 'honest beside the tricklers';
      const out = await h.swaks([
        '--local-interface',
        '127.0.2.9',
        '--to',
        `honest@${DOMAIN}`,
        '--from',
        'a@example.org',
        '--header',
        `Subject: ${subject}`,
      ]);
      expect(out).toMatch(/<- {2}250 2\.0\.0 Ok: queued/);
      await eventually(
        () => h.posted(DOMAIN).some((p) => p.success && p.details.subject === subject),
        'the honest message posted',
      );
      // however steadily they trickle, the DATA deadline ends them
      for (const { s } of slow) {
        expect(await s.reply()).toBe(
          '421 4.4.2 DATA time limit exceeded, closing connection (try again later)',
        );
        await s.closed;
      }
    } finally {
      for (const t of slow) t.stop();
    }
    expect(await storedCount(h)).toBe(before + 1); // the honest message only
    expect(h.held().bytes).toBe(0);
    // their slots are free again
    const again = await eventually(async () => {
      const s = await open(h.port, '127.0.2.2');
      const g = await s.reply().catch(() => '');
      if (g.startsWith('220')) return s;
      await s.close();
      return null;
    }, 'a slot for 127.0.2.2 again');
    await again.close();
  });

  test('a session that never goes idle but never ends (NOOP every 200 ms) is cut at the session deadline', async () => {
    const s = await open(h.port, '127.0.2.4');
    expect(await s.reply()).toMatch(/^220 /);
    s.send('EHLO busy.example.org');
    expect(await s.reply()).toMatch(/^250 /);
    const timer = setInterval(() => {
      if (!s.socket.destroyed) s.send('NOOP');
    }, 200);
    try {
      let reply = await s.reply();
      while (reply.startsWith('250')) reply = await s.reply();
      expect(reply).toBe('421 4.4.2 Session time limit exceeded, closing connection (try again later)');
      await s.closed;
    } finally {
      clearInterval(timer);
    }
  });
});
