import { type Socket, connect } from 'node:net';
import { type SmtpSink, startSmtpSink } from '../peers/smtp-sink';

/**
 * The smtp-sink test peer: a message is reported only once its transaction has ended. smtp-sink
 * writes the dump file as the commands arrive, so a reader that took any file as a message saw
 * transactions without recipients or body (send-pipeline failed once that way under load).
 */
describe('smtp-sink test peer', () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink({ dump: true });
  });
  afterAll(async () => {
    await sink?.stop();
  });

  /** A line-at-a-time SMTP client: `say` sends a command and resolves with the reply. */
  async function session(port: number): Promise<{ say(line: string): Promise<string>; socket: Socket }> {
    const socket = connect(port, '127.0.0.1');
    let buffered = '';
    let waiter: (() => void) | null = null;
    socket.on('data', (d) => {
      buffered += d.toString();
      waiter?.();
    });
    const reply = () =>
      new Promise<string>((resolve) => {
        const check = () => {
          // a complete reply: its last line has a space after the code
          const m = /(?:^|\r\n)(\d{3} [^\r\n]*\r\n)$/.exec(buffered);
          if (!m) return;
          const text = buffered;
          buffered = '';
          waiter = null;
          resolve(text);
        };
        waiter = check;
        check();
      });
    await reply();
    return {
      socket,
      async say(line) {
        socket.write(`${line}\r\n`);
        return reply();
      },
    };
  }

  it('reports a transaction only after its final dot, with its recipients and body', async () => {
    const c = await session(sink.port);
    await c.say('EHLO client.test');
    await c.say('MAIL FROM:<a@client.test>');
    await c.say('RCPT TO:<b@sink.test>');
    expect(await c.say('DATA')).toMatch(/^354/);
    c.socket.write('Subject: half\r\n\r\nfirst line\r\n');
    // The transaction is open: smtp-sink has a dump file for it, the peer must not report it.
    expect(sink.messages()).toHaveLength(0);

    expect(await c.say('last line\r\n.')).toMatch(/^250/);
    const [message] = await sink.waitForMessages(1);
    expect(message!.from).toBe('a@client.test');
    expect(message!.to).toEqual(['b@sink.test']);
    expect(message!.message).toContain('last line');
    await c.say('QUIT');
    c.socket.destroy();
  });
});
