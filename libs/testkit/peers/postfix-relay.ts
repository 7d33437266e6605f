import { execFile } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../eventually';
import { portOpen } from '../private-servers';
import { freePort } from '../process';

const run = promisify(execFile);

export interface PostfixRelayOptions {
  /** Where mail for any other domain goes: an SMTP server on 127.0.0.1 (`smtp:[127.0.0.1]:port`). */
  defaultPort: number;
  /** Per-domain routes to other SMTP servers on 127.0.0.1 (e.g. the bounce domain -> the inbound service). */
  transports?: Record<string, number>;
  /** main.cf lines added as given (e.g. `maximal_queue_lifetime = 0`). */
  extra?: string[];
}

export interface PostfixRelay {
  /** The smtpd port on 127.0.0.1 (relays for 127.0.0.0/8). */
  port: number;
  /** Postfix's own log (maillog_file), for assertions and failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * A private Postfix instance (Debian's postfix) on a free port of 127.0.0.1, with its own config,
 * queue and data directories under /tmp: a real MTA that relays what it is given and, when the
 * next hop refuses a recipient, returns a real RFC 3464 DSN to the envelope sender. Its own
 * `postfix -c <dir>` start and stop touch no other instance. Needs root (Postfix's master and
 * its data directory owned by the `postfix` user), as CI runs; no DNS (`[127.0.0.1]` routes).
 */
export async function startPostfixRelay(opts: PostfixRelayOptions): Promise<PostfixRelay> {
  if (process.getuid?.() !== 0) throw new Error('startPostfixRelay: a private Postfix instance needs root');
  const base = mkdtempSync('/tmp/mailyard-postfix-');
  chmodSync(base, 0o755);
  const etc = join(base, 'etc');
  const data = join(base, 'data');
  for (const d of [etc, join(base, 'queue'), data]) mkdirSync(d, { recursive: true, mode: 0o755 });
  const { stdout: uid } = await run('id', ['-u', 'postfix']);
  chownSync(data, Number(uid.trim()), -1);
  copyFileSync('/etc/postfix/master.cf.proto', join(etc, 'master.cf'));
  const port = await freePort();
  const master = readFileSync(join(etc, 'master.cf'), 'utf8')
    .split('\n')
    .map((line) => {
      if (/^smtp\s+inet\s/.test(line)) return `127.0.0.1:${port} inet n - n - - smtpd`;
      // no chroot: the private directories are not set up for it
      const f = line.split(/\s+/);
      if (!line.startsWith('#') && f.length >= 8 && f[4] === 'y') {
        f[4] = 'n';
        return f.join(' ');
      }
      return line;
    })
    .join('\n');
  writeFileSync(join(etc, 'master.cf'), master);
  const routes = Object.entries(opts.transports ?? {})
    .map(([domain, p]) => `${domain}=smtp:[127.0.0.1]:${p}`)
    .join(', ');
  const logFile = join(base, 'maillog');
  writeFileSync(
    join(etc, 'main.cf'),
    [
      'compatibility_level = 3.6',
      `queue_directory = ${join(base, 'queue')}`,
      `data_directory = ${data}`,
      'mail_owner = postfix',
      'setgid_group = postdrop',
      'myhostname = relay.mailyard-test.example',
      'mydomain = mailyard-test.example',
      'mydestination =',
      'inet_interfaces = 127.0.0.1',
      'inet_protocols = ipv4',
      'mynetworks = 127.0.0.0/8',
      'relay_domains =',
      'smtpd_relay_restrictions = permit_mynetworks, reject',
      'smtp_dns_support_level = disabled',
      'smtputf8_enable = no',
      `default_transport = smtp:[127.0.0.1]:${opts.defaultPort}`,
      ...(routes ? [`transport_maps = inline:{ ${routes} }`] : []),
      `maillog_file_prefixes = ${base}`,
      `maillog_file = ${logFile}`,
      ...(opts.extra ?? []),
      '',
    ].join('\n'),
  );
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const postfix = (cmd: string) => run('postfix', ['-c', etc, cmd]);
  try {
    await postfix('start');
    await eventually(() => portOpen(port), `private postfix listening on ${port}`, 15_000);
  } catch (err) {
    await postfix('stop').catch(() => {});
    rmSync(base, { recursive: true, force: true });
    throw new Error(`private postfix did not start: ${(err as Error).message}\n${log()}`);
  }
  return {
    port,
    log,
    async stop() {
      await postfix('stop').catch(() => {});
      await eventually(
        async () => !(await portOpen(port)),
        `private postfix on ${port} stopped`,
        15_000,
      ).catch(() => {});
      rmSync(base, { recursive: true, force: true });
    },
  };
}
