import { endpointKeys } from '@mailyard/testkit/app-routes';
import { MODES } from '@mailyard/testkit/modes';
/**
 * Tenant isolation over every /v1 route (support/isolation-table.ts): tenant A owns one resource
 * of every kind; tenant B, with its own key, tries each route with A's ids and names. B gets the
 * route's not-found answer (or, acting on its own data under a name A also uses, a success that
 * shows nothing of A), no answer carries an identifier of A that B did not send, and every stored
 * row of A (all tables with a tenant_id, its outbox messages, its delivery attempts) is the same
 * before and after. The table is checked against the gateway's own route table: a route added
 * without a row, or an id field no probe sends, fails here. Run on embedded defaults and on the
 * real servers.
 */
import { type GoogleOAuthStandIn, startGoogleOAuth } from '@mailyard/testkit/peers/google-oauth';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import request from 'supertest';
import type { ZodTypeAny } from 'zod';
import { OPERATIONS } from '../src/openapi/catalogue';
import { bearer, useGateway } from './support/harness';
import { type Fixture, addIsolationClients, buildFixture } from './support/isolation-fixture';
import { ISOLATION_TABLE, type Probe } from './support/isolation-table';
import { tenantRows } from './support/tenant-rows';

jest.setTimeout(120_000);

/** Body and query fields that name a stored resource (an id, a domain, an address, an event type). */
const REFERENCE_FIELD = /(^id$|_id$|Id$|^domain$|^event$|^user_?name$)/;
/** Fields that look like ids but name nothing stored: what the caller labels its own request with. */
const NOT_A_REFERENCE: Record<string, string> = {
  'POST /v1/email/send campaign_id': 'a label the sender puts on its own send',
  'GET /v1/events/stream ref_id': "a filter over the caller's own live events",
  'GET /v1/events/stream event': 'an event type, not a stored thing',
};
/** Top-level field names of a request schema (through refinements, transforms and pipes). */
function fieldsOf(schema: ZodTypeAny | undefined): string[] {
  let s = schema as
    | { _def?: { typeName?: string; schema?: unknown; in?: unknown }; shape?: object }
    | undefined;
  while (s?._def) {
    if (s._def.typeName === 'ZodObject') return Object.keys(s.shape ?? {});
    s = (s._def.typeName === 'ZodEffects' ? s._def.schema : s._def.in) as typeof s;
  }
  return [];
}

/** The fields of a route's body and query schemas (its OpenAPI entry) that name a stored resource. */
function idFieldsOf(key: string): string[] {
  const [method, path] = key.split(' ');
  const op = OPERATIONS.find((o) => o.method === method && o.path === path);
  return [...fieldsOf(op?.body?.schema), ...fieldsOf(op?.query?.schema)].filter(
    (field) => REFERENCE_FIELD.test(field) && !NOT_A_REFERENCE[`${key} ${field}`],
  );
}

const probesOf = (key: string): Probe[] => {
  const row = ISOLATION_TABLE[key]!;
  return 'probes' in row ? row.probes : [];
};

const cases = Object.keys(ISOLATION_TABLE).flatMap((key) =>
  probesOf(key).map((probe) => [`${key}: B ${probe.what}`, key, probe] as const),
);

let receiver: WebhookReceiver;
let google: GoogleOAuthStandIn;
beforeAll(async () => {
  [receiver, google] = await Promise.all([startWebhookReceiver(), startGoogleOAuth()]);
  addIsolationClients(google);
});
afterAll(async () => {
  await receiver?.close();
  await google?.close();
});

for (const mode of MODES) {
  describe(`tenant isolation on every /v1 route (${mode})`, () => {
    const gw = useGateway(mode, {
      WEBHOOK_ALLOW_INSECURE: '1',
      RATE_LIMIT_STANDARD: '1000000',
      get GOOGLE_OAUTH_URL() {
        return google.url;
      },
    });
    let f: Fixture;
    const asB = (method: 'get' | 'post' | 'put' | 'delete', path: string, body?: object) => {
      const req = request(gw.app)[method](path).set(bearer(gw.otherKey));
      return body === undefined ? req : req.send(body);
    };
    beforeAll(async () => {
      f = await buildFixture(gw, { receiver, google });
    });

    it('has a row for every /v1 route the gateway serves, and none for a route it does not serve', () => {
      const served = endpointKeys(gw.app).filter((k) => k.split(' ')[1]!.startsWith('/v1/'));
      expect(served.length).toBeGreaterThan(40);
      expect(Object.keys(ISOLATION_TABLE).sort()).toEqual([...new Set(served)].sort());
    });

    it('exempts only routes that name nothing: no path parameter, no id field in the body or query', () => {
      const named = Object.entries(ISOLATION_TABLE)
        .filter(([key, row]) => 'exempt' in row && (key.includes(':') || idFieldsOf(key).length > 0))
        .map(([key]) => key);
      expect(named).toEqual([]);
    });

    it("sends every id field of a route's body and query in at least one probe", () => {
      const missing = Object.keys(ISOLATION_TABLE).flatMap((key) => {
        const sent = new Set(
          probesOf(key).flatMap((p) => [
            ...Object.keys(p.body?.(f) ?? {}),
            ...new URL(p.path(f), 'http://x').searchParams.keys(),
          ]),
        );
        return idFieldsOf(key)
          .filter((field) => !sent.has(field))
          .map((field) => `${key} ${field}`);
      });
      expect(missing).toEqual([]);
    });

    it.each(cases)('%s', async (_name, key, probe) => {
      const method = key.split(' ')[0]!.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
      const path = probe.path(f);
      const body = probe.body?.(f);
      const rowsOfA = await tenantRows(gw.ctx.db, gw.tenantId);
      const res = await asB(method, path, body);

      expect({ status: res.status, error: res.body?.error }).toEqual({
        status: probe.status,
        error: probe.error,
      });
      probe.shows?.(res.body);
      // Nothing of A that B did not name itself comes back.
      const asked = `${path} ${JSON.stringify(body ?? {})}`;
      const answer = JSON.stringify(res.body);
      const leaked = Object.values(f.a).filter((v) => !asked.includes(v) && answer.includes(v));
      expect(leaked).toEqual([]);
      expect(await tenantRows(gw.ctx.db, gw.tenantId)).toEqual(rowsOfA);
      // B undoing what it made for itself must not touch A either.
      if (probe.undo) {
        await probe.undo(
          { post: (p, b) => asB('post', p, b), delete: (p, b) => asB('delete', p, b) },
          res,
          f,
        );
        expect(await tenantRows(gw.ctx.db, gw.tenantId)).toEqual(rowsOfA);
      }
    });
  });
}
