import { AuthenticationError, BadRequestError, Mailyard, MailyardApiError } from '@mailyard/client';
/**
 * `pnpm cli tail`: the account's email events as they are recorded, one line each (time, event,
 * recipient, ref_id, short reason), through the client library's event-stream reader
 * (libs/client events.stream: the one HTTP layer). Reconnects with the platform's back-off,
 * resuming from the last event id; exits 0 on Ctrl-C, 2 on a refused key or bad filter.
 */
import type { EmailEvent, EmailEventType } from '@mailyard/contracts';
import { backoffOrAsked, jittered } from '@mailyard/platform';

export const TAIL_USAGE = `usage: pnpm cli tail [--url <gateway URL>] [--key <API key>] [--event <TYPE[,TYPE...]>]
                     [--ref-id <ref_id>] [--email <recipient>] [--json]
  --url    gateway base URL (default $MAILYARD_URL, else http://localhost:3000)
  --key    API key (default $MAILYARD_API_KEY); a read-only key is enough
  --event  only these event types, e.g. MAIL_DELIVERED,MAIL_BOUNCE
  --ref-id only the events of this send
  --email  only events naming this recipient
  --json   print each event object as one JSON line instead`;

/** Reconnect gap: 500 ms doubling up to 30 s (jittered), or what a 429/503 asked for. */
const RECONNECT = { minMs: 500, maxMs: 30_000, maxDoublings: 6 };
const MAX_REASON = 80;

interface TailArgs {
  url: string;
  key: string;
  event?: string;
  refId?: string;
  email?: string;
  json: boolean;
}

function parseArgs(args: string[], env: NodeJS.ProcessEnv): TailArgs | string {
  const out: TailArgs = {
    url: env.MAILYARD_URL || 'http://localhost:3000',
    key: env.MAILYARD_API_KEY ?? '',
    json: false,
  };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!;
    if (flag === '--json') {
      out.json = true;
      continue;
    }
    const value = args[++i];
    if (value === undefined || value.startsWith('--')) return `${flag} needs a value`;
    if (flag === '--url') out.url = value;
    else if (flag === '--key') out.key = value;
    else if (flag === '--event') out.event = value;
    else if (flag === '--ref-id') out.refId = value;
    else if (flag === '--email') out.email = value;
    else return `unknown option ${flag}`;
  }
  if (!out.key) return 'no API key: pass --key or set MAILYARD_API_KEY';
  return out;
}

/** One line: time, event, recipient(s), ref_id, short reason. */
export function tailLine(e: EmailEvent): string {
  const d = e.details;
  const reason = d.failed_reason.replace(/\s+/g, ' ').trim();
  const short = reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason;
  return [d.event_at, e.event.padEnd(17), d.email.join(',') || '-', d.ref_id, short]
    .filter(Boolean)
    .join('  ');
}

export async function tail(args: string[]): Promise<number> {
  const parsed = parseArgs(args, process.env);
  if (typeof parsed === 'string') {
    process.stderr.write(`${parsed}\n${TAIL_USAGE}\n`);
    return 2;
  }
  const client = new Mailyard({ apiKey: parsed.key, basePath: parsed.url });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const filters = {
    ...(parsed.event ? { event: parsed.event.split(',') as EmailEventType[] } : {}),
    ...(parsed.refId ? { refId: parsed.refId } : {}),
    ...(parsed.email ? { email: parsed.email } : {}),
  };
  let lastEventId: string | undefined;
  let failures = 0;
  try {
    while (!stop.signal.aborted) {
      let askedMs: number | undefined;
      try {
        process.stderr.write(`tail: connecting to ${parsed.url}\n`);
        for await (const { id, event } of client.events.stream({
          filters,
          lastEventId,
          signal: stop.signal,
        })) {
          lastEventId = id || lastEventId;
          failures = 0;
          process.stdout.write(`${parsed.json ? JSON.stringify(event) : tailLine(event)}\n`);
        }
        if (stop.signal.aborted) break;
        process.stderr.write('tail: the stream ended\n');
      } catch (err) {
        if (err instanceof AuthenticationError || err instanceof BadRequestError) {
          process.stderr.write(`tail: ${err.error}${err.details ? ` (${err.details})` : ''}\n`);
          return 2;
        }
        if (err instanceof MailyardApiError && err.status === 403) {
          process.stderr.write(`tail: ${err.error}\n`);
          return 2;
        }
        if (err instanceof MailyardApiError && err.retryAfter !== undefined) askedMs = err.retryAfter * 1000;
        process.stderr.write(`tail: ${(err as Error).message}\n`);
      }
      const waitMs = jittered(backoffOrAsked(failures++, RECONNECT, askedMs));
      process.stderr.write(`tail: reconnecting in ${(waitMs / 1000).toFixed(1)} s\n`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, waitMs);
        stop.signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
