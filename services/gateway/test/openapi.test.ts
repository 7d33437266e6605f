/**
 * /openapi.json and /docs: every route the express app serves is described (and nothing that is
 * not served), every request example validates against the zod schema the route parses with,
 * every example answer has the shape of its kind, and both documents are served without a key.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorText } from '@mailyard/contracts';
import { endpointKeys } from '@mailyard/testkit/app-routes';
import { REPO_ROOT } from '@mailyard/testkit/process';
import request from 'supertest';
import { z } from 'zod';
import { OPERATIONS } from '../src/openapi/catalogue';
import { buildOpenApiDocument, openApiPath } from '../src/openapi/document';
import { type TestGateway, createStores, startGateway } from './support/harness';

const ErrorEnvelope = z
  .object({ success: z.literal(false), error: z.string(), details: z.string().optional() })
  .strict();

let gw: TestGateway | undefined;
beforeAll(async () => {
  // /docs is served from the built assets (dist/ui): build them when this checkout has none.
  if (!existsSync(join(REPO_ROOT, 'dist', 'ui', 'manifest.json'))) {
    const built = spawnSync(process.execPath, ['services/gateway/dashboard/build.mjs'], { cwd: REPO_ROOT });
    if (built.status !== 0) throw new Error(`dashboard build failed: ${built.stderr}`);
  }
  gw = await startGateway(await createStores('embedded'));
});
afterAll(() => gw?.close());

describe('OpenAPI document', () => {
  it('describes every route the gateway serves, and only those', () => {
    const served = endpointKeys(gw!.app).sort();
    const documented = OPERATIONS.map((o) => `${o.method} ${o.path}`).sort();
    expect(served.length).toBeGreaterThan(30);
    expect(documented).toEqual(served);
  });

  it.each(OPERATIONS.filter((o) => o.body).map((o) => [`${o.method} ${o.path}`, o] as const))(
    'the request example of %s validates against its schema',
    (_name, op) => {
      const r = op.body!.schema.safeParse(op.body!.example);
      expect(r.error?.issues ?? []).toEqual([]);
    },
  );

  it.each(OPERATIONS.filter((o) => o.query).map((o) => [`${o.method} ${o.path}`, o] as const))(
    'the query example of %s validates against its schema',
    (_name, op) => {
      const r = op.query!.schema.safeParse(op.query!.example);
      expect(r.error?.issues ?? []).toEqual([]);
    },
  );

  it.each(OPERATIONS.filter((o) => o.success.schema).map((o) => [`${o.method} ${o.path}`, o] as const))(
    'the answer example of %s validates against its schema, which the document shows',
    (_name, op) => {
      const r = op.success.schema!.safeParse(op.success.example);
      expect(r.error?.issues ?? []).toEqual([]);
      type Answer = { content: Record<string, { schema?: { type?: string } }> };
      const doc = buildOpenApiDocument() as {
        paths: Record<string, Record<string, { responses: Record<string, Answer> }>>;
      };
      const answer =
        doc.paths[openApiPath(op.path)]![op.method.toLowerCase()]!.responses[String(op.success.status)]!;
      expect(answer.content['application/json']!.schema?.type).toBe('object');
    },
  );

  it('every API answer example is a success answer; the error envelope schema accepts real errors', () => {
    // docs/api/conventions.md: GET /v1/inbound/{domain} answers the record itself, without `success`;
    // GET /v1/events/stream answers text/event-stream.
    const bare = new Set(['GET /v1/inbound/:domain', 'GET /v1/events/stream']);
    for (const op of OPERATIONS.filter((o) => o.auth !== 'none' && !bare.has(`${o.method} ${o.path}`)))
      expect({ op: op.path, success: (op.success.example as { success?: unknown }).success }).toEqual({
        op: op.path,
        success: true,
      });
    expect(ErrorEnvelope.safeParse({ success: false, error: ErrorText.templateNotFound }).success).toBe(true);
  });

  it('is served at /openapi.json without a key, as OpenAPI 3.1 with schemas from zod', async () => {
    const res = await request(gw!.app).get('/openapi.json').expect(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const op of OPERATIONS)
      expect(res.body.paths[openApiPath(op.path)]?.[op.method.toLowerCase()]).toBeDefined();
    const send = res.body.paths['/v1/email/send'].post;
    const schema = send.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['from', 'to', 'mailer_id']));
    expect(schema.properties.to.type).toBe('array');
    expect(JSON.stringify(schema.properties.send_at)).toContain('"format":"date-time"');
    const logs = res.body.paths['/v1/email/logs'].get.parameters.map((p: { name: string }) => p.name);
    expect(logs).toEqual(expect.arrayContaining(['status', 'startDate', 'pageToken', 'pageSize']));
    expect(res.body.paths['/v1/mailer/{mailer_id}'].get.parameters[0]).toMatchObject({
      name: 'mailer_id',
      in: 'path',
    });
    expect(send.responses['400'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorEnvelope',
    );
  });

  it('a real error answer matches the documented envelope', async () => {
    const res = await request(gw!.app).get('/v1/email/templates').expect(401);
    expect(ErrorEnvelope.safeParse(res.body).success).toBe(true);
  });

  it('serves /docs: Swagger UI from local hashed assets, no inline script, nothing from another host', async () => {
    const res = await request(gw!.app).get('/docs').expect(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.text).toMatch(/<script type="module" src="\/ui\/assets\/docs-[A-Z0-9]+\.js"><\/script>/);
    expect(res.text).not.toMatch(/<script>|<style|https?:\/\//);
    const js = /src="(\/ui\/assets\/docs-[A-Z0-9]+\.js)"/.exec(res.text)![1]!;
    const asset = await request(gw!.app).get(js).expect(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
  });
});
