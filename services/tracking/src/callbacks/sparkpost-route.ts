/**
 * POST /callbacks/sparkpost/:mailerId: SparkPost's event webhook for one SparkPost mailer
 * (docs/providers.md "SparkPost callbacks", docs/tracking.md). Not under /v1: no API key.
 *
 * 1. HTTP Basic auth with the callback credentials issued when the mailer was created (username
 *    as stored, password against its SHA-256 digest, both compared in constant time). Missing or
 *    wrong credentials, another mailer's, a mailer that is unknown, deleted or not a SparkPost
 *    mailer: all the same 401 with `WWW-Authenticate: Basic` (no oracle); the body is drained
 *    unread.
 * 2. Then the body: JSON, at most CALLBACK_BODY_LIMIT bytes (413 at once when Content-Length says
 *    more, else as soon as it is crossed; nothing past it is held), the platform's JSON reader
 *    (depth, UTF-8, NUL checks: 400 envelopes).
 * 3. SparkPost's batch envelope (wire.ts parseSparkPostBatch), else 400. A batch without events
 *    (the test ping `[{"msys": {}}]`) is answered 200 and not stored.
 * 4. The batch is stored (provider_callback_batches) and only then answered 200; the worker is
 *    woken to process it (sparkpost-worker.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import { ErrorText } from '@mailyard/contracts';
import {
  type Db,
  HttpError,
  type JsonBodyLimits,
  counter,
  digestSecret,
  readJsonBody,
  secretMatches,
} from '@mailyard/platform';
import { parseSparkPostBatch } from '@mailyard/providers';
import { type CallbackMailer, callbackMailer, providerCallbacks } from '@mailyard/store';
import type { Express, Request } from 'express';
import { basicCredentials } from './basic-auth';

export const SPARKPOST_CALLBACK_PATH = '/callbacks/sparkpost/:mailerId';

/** Largest batch body: SparkPost's batches are a few MB at most. */
export const CALLBACK_BODY_LIMIT = 5 * 1024 * 1024;

const LIMITS: JsonBodyLimits = { limit: CALLBACK_BODY_LIMIT, maxDepth: 32, maxValues: 2_000_000 };

/** Compared against when there is no mailer, so an unknown mailer costs the same work. */
const NO_DIGEST = digestSecret('no such callback password');

export const callbackRequests = counter(
  'mailyard_provider_callback_requests_total',
  'Provider callback requests by provider and outcome (stored, ping, unauthorized, rejected)',
  ['provider', 'outcome'],
);

const unauthorized = () =>
  new HttpError(401, ErrorText.callbackUnauthorized, {
    headers: { 'WWW-Authenticate': 'Basic realm="mailyard callbacks", charset="UTF-8"' },
  });

const sameText = (a: string, b: string) => timingSafeEqual(digestSecret(a), digestSecret(b));

/** The SparkPost mailer the request's credentials open, else a 401. */
async function authenticate(db: Db, req: Request): Promise<CallbackMailer> {
  const mailerId = String(req.params.mailerId ?? '');
  const creds = basicCredentials(req.get('authorization'));
  const found = mailerId.length <= 128 ? await callbackMailer(db, mailerId) : null;
  const mailer = found?.configType === 'sparkpost' && found.username ? found : null;
  const userOk = sameText(creds?.username ?? '', mailer?.username ?? '\u0000');
  const passwordOk = secretMatches(creds?.password ?? '', mailer?.passwordDigest ?? NO_DIGEST);
  if (!creds || !mailer || !userOk || !passwordOk) throw unauthorized();
  return mailer;
}

const readBody = (req: Request) =>
  new Promise<unknown>((resolve, reject) =>
    readJsonBody(req, LIMITS, (err) => (err ? reject(err) : resolve(req.body))),
  );

export interface CallbackRouteDeps {
  db: Db;
  /** A batch was stored: wake the worker. */
  onStored: () => void;
}

export function sparkPostCallbackRoute(app: Express, deps: CallbackRouteDeps): void {
  app.post(SPARKPOST_CALLBACK_PATH, async (req, res) => {
    let mailer: CallbackMailer;
    try {
      mailer = await authenticate(deps.db, req);
    } catch (err) {
      req.resume(); // the body of a refused request is drained unread
      callbackRequests.inc({ provider: 'sparkpost', outcome: 'unauthorized' });
      throw err;
    }
    let body: unknown;
    try {
      body = await readBody(req);
    } catch (err) {
      callbackRequests.inc({ provider: 'sparkpost', outcome: 'rejected' });
      throw err;
    }
    const batch = parseSparkPostBatch(body);
    if (!batch.ok) {
      callbackRequests.inc({ provider: 'sparkpost', outcome: 'rejected' });
      throw new HttpError(400, ErrorText.callbackInvalidBatch, { details: batch.error });
    }
    if (batch.events.length === 0) {
      callbackRequests.inc({ provider: 'sparkpost', outcome: 'ping' });
      res.json({ success: true, message: 'No events' });
      return;
    }
    const batchId = req.get('x-messagesystems-batch-id')?.slice(0, 200);
    await providerCallbacks.store(deps.db, {
      tenantId: mailer.tenantId,
      mailerId: mailer.id,
      provider: 'sparkpost',
      body: JSON.stringify(body),
      ...(batchId ? { batchId } : {}),
    });
    callbackRequests.inc({ provider: 'sparkpost', outcome: 'stored' });
    deps.onStored();
    res.json({ success: true, message: `${batch.events.length} events received` });
  });
}
