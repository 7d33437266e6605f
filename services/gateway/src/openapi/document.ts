/**
 * OpenAPI 3.1 document built from catalogue.ts: request bodies and query parameters are the JSON
 * Schema of the zod schemas the routes parse with (their *input* side, what a client writes),
 * answers carry the catalogue's examples and the spec's error envelope. Built once per process.
 */
import { zodToJsonSchema } from 'zod-to-json-schema';
import { OPERATIONS, type Operation } from './catalogue';

type Json = Record<string, unknown>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request (the message names the field)',
  401: 'Invalid or missing key',
  403: 'The API key is not allowed to do this (its scope: see the keys page)',
  404: "Not found (another tenant's objects read as absent)",
  409: 'Conflict',
  413: 'Request body too large',
  422: 'Not processable',
  429: 'Rate limit exceeded (see Retry-After)',
  500: 'Internal server error',
  503: 'A dependency (database, kv store) or a provider is unavailable or throttling (see Retry-After)',
};

export const ERROR_ENVELOPE_SCHEMA: Json = {
  type: 'object',
  required: ['success', 'error'],
  properties: {
    success: { const: false },
    error: { type: 'string' },
    details: { type: 'string' },
  },
};

/** JSON Schema (2020-12 compatible subset) of a zod schema's input. */
export function inputSchema(op: Pick<NonNullable<Operation['body']>, 'schema'> | undefined): Json {
  if (!op) return {};
  // The options object is typed loosely: zod-to-json-schema's generics recurse too deep on our schemas.
  const toJson = zodToJsonSchema as (schema: unknown, options: Json) => unknown;
  const s = toJson(op.schema, {
    target: 'jsonSchema7',
    effectStrategy: 'input',
    pipeStrategy: 'input',
    $refStrategy: 'none',
  }) as Json;
  const { $schema: _drop, ...rest } = s;
  return rest;
}

export const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

function operationObject(op: Operation): Json {
  const params: Json[] = [...op.path.matchAll(/:(\w+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (op.query) {
    const q = inputSchema(op.query) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {}))
      params.push({
        name,
        in: 'query',
        required: q.required?.includes(name) ?? false,
        schema,
        example: op.query.example[name],
      });
  }
  for (const h of op.headers ?? [])
    params.push({
      name: h.name,
      in: 'header',
      required: false,
      description: h.description,
      schema: { type: 'string' },
    });
  const isJson = typeof op.success.example === 'object';
  const responses: Json = {
    [String(op.success.status)]: {
      description: op.success.description,
      content: {
        [op.success.contentType ?? (isJson ? 'application/json' : 'text/plain')]: {
          ...(op.success.schema ? { schema: inputSchema({ schema: op.success.schema }) } : {}),
          example: op.success.example,
        },
      },
    },
  };
  const errors =
    op.auth === 'none'
      ? op.errors
      : [...new Set([...op.errors, 401, ...(op.auth === 'apiKey' ? [403, 429] : []), 500, 503])];
  for (const status of errors.sort())
    responses[String(status)] = {
      description: STATUS_TEXT[status] ?? 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  return {
    tags: [op.tag],
    summary: op.summary,
    operationId: `${op.method.toLowerCase()}${op.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    ...(op.auth === 'apiKey'
      ? { security: [{ apiKey: [] }] }
      : op.auth === 'admin'
        ? { security: [{ adminKey: [] }] }
        : { security: [] }),
    ...(params.length ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: inputSchema(op.body), example: op.body.example } },
          },
        }
      : {}),
    responses,
  };
}

let cached: Json | undefined;

export function buildOpenApiDocument(): Json {
  if (cached) return cached;
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    const p = openApiPath(op.path);
    paths[p] = { ...paths[p], [op.method.toLowerCase()]: operationObject(op) };
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Mailyard API',
      version: '1.0.0',
      description:
        'Self-hostable email delivery. Every error is `{success:false, error, details?}`. Keys are sent as `Authorization: Bearer <key>`.',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(OPERATIONS.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'A tenant API key' },
        adminKey: { type: 'http', scheme: 'bearer', description: 'ADMIN_API_KEY' },
      },
      schemas: { ErrorEnvelope: ERROR_ENVELOPE_SCHEMA },
    },
  };
  return cached;
}
