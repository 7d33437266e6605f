/**
 * POST /v1/imapbasic/verify against IMAP servers a tenant controls (libs/testkit/peers/
 * hostile-imap: TLS on port 993 of a loopback alias): the login check answers with a clear 422
 * within its deadline (three times IMAP_VERIFY_TIMEOUT_MS in all) and holds no more than a few
 * KB of what the server sends, while an honest verify against a real Dovecot, sent at the same
 * time, creates its mailer.
 */
import { eventually } from '@mailyard/testkit/eventually';
import { watchMemory } from '@mailyard/testkit/memory-peak';
import { type Dovecot, startDovecot } from '@mailyard/testkit/peers/dovecot';
import {
  type HostileImap,
  type HostileImapAttack,
  startHostileImap,
} from '@mailyard/testkit/peers/hostile-imap';
import { useGateway } from './support/harness';

const USER = 'support@imap.test';
const PASS = 'Dove-c0t-Secret!';
const TIMEOUT_MS = 2000;
/** What a client that stops reading can have received: TLS and socket buffers. */
const SOCKET_SLACK = 16 * 1024 * 1024;
const MEMORY_SLACK = 64 * 1024 * 1024;

describe('imapbasic/verify against a hostile IMAP server (servers)', () => {
  const gw = useGateway('servers', { IMAP_VERIFY_TIMEOUT_MS: String(TIMEOUT_MS) });
  let dovecot: Dovecot | null = null;
  const hostiles: HostileImap[] = [];

  beforeAll(async () => {
    dovecot = await startDovecot({ user: USER, pass: PASS, messages: 1 });
  });
  afterAll(async () => {
    for (const s of hostiles) await s.stop();
    await dovecot?.stop();
  });

  const body = (host: string) => ({
    name: 'Support',
    email: USER,
    config_type: 'imap',
    connection_type: 'basic',
    config: { host, port: 993, username: USER, password: PASS, secure: 'SSL' },
  });

  /** The hostile verify and an honest one at the same time; the hostile answer. */
  async function attack(a: HostileImapAttack) {
    const evil = await startHostileImap({ attack: a });
    hostiles.push(evil);
    const memory = watchMemory();
    const [bad, good] = await Promise.all([
      gw.post('/v1/imapbasic/verify', body(evil.host)),
      gw.post('/v1/imapbasic/verify', body(dovecot!.host)),
    ]);
    const peak = memory.stop();
    expect(good.status).toBe(201);
    expect(good.body).toMatchObject({ success: true, message: 'IMAP credentials verified; mailer created' });
    expect(evil.attacks()).toBe(1);
    expect(peak).toBeLessThan(MEMORY_SLACK);
    return { evil, bad, peak };
  }

  it('a huge literal after LOGIN (1 GB announced, streamed forever) is a 422 at its announcement', async () => {
    const { evil, bad, peak } = await attack({ kind: 'huge-literal', on: 'login', announce: 1_000_000_000 });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      success: false,
      error: 'IMAP verification failed',
      details: `${evil.host}:993 sent a response over the limit: Literal size 1000000000 exceeds maximum allowed size of 65536 bytes (LiteralTooLarge)`,
    });
    expect(evil.bytesSent()).toBeLessThan(SOCKET_SLACK);
    console.log(
      `verify, huge literal: server sent ${evil.bytesSent()} bytes; peak memory growth ${peak} bytes`,
    );
  });

  it('untagged lines forever after LOGIN (never the tagged answer) is a timeout 422 at the login deadline', async () => {
    const { evil, bad } = await attack({ kind: 'endless-untagged', on: 'login' });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      success: false,
      error: 'The IMAP server did not answer in time',
      details: `${evil.host}:993 did not finish the login within ${3 * TIMEOUT_MS} ms`,
    });
    // The connection was dropped at the deadline: the server's stream ends.
    await eventually(() => evil.open() === 0, 'the hostile connection to close');
  });

  it('only the honest verifies created mailers', async () => {
    const list = await gw.get('/v1/mailers');
    const hosts = list.body.data.map((m: { config: { host: string } }) => m.config.host);
    expect(hosts).toEqual([dovecot!.host, dovecot!.host]);
  });
});
