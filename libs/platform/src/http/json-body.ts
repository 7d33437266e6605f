import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { ErrorText, InputErrorText, findUnsafeText, mayHoldUnsafeText } from '@mailyard/contracts';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HttpError } from './errors';
import type { HttpNext, HttpRequest } from './http-types';
import { JsonShapeScanner } from './json-shape';

/**
 * The JSON body reader of every HTTP service, mounted after authentication (createHttpApp's
 * `guards`), so a request without a valid key is answered before a byte of its body is read.
 *
 * - Size: `limit` bytes after decompression (413 as soon as it is crossed; at once when
 *   Content-Length says so). Routes that need more (the send route) get their own limits.
 * - Shape: depth and value count are checked while the body streams in (JsonShapeScanner), so
 *   `[{},{},...]` is refused after its first few hundred KB instead of being parsed; JSON.parse
 *   then only ever sees a body whose cost is bounded by its size and its value count.
 * - Text: UTF-8 only; every string and key free of NUL and lone surrogates (findUnsafeText),
 *   which PostgreSQL cannot store: a 400 naming the field, never a 500 from the database.
 * - Content-Type must be JSON (415), Content-Encoding identity, gzip, deflate or br (415); a
 *   body that does not decompress is a 400.
 * A request without a body (no Content-Length or 0, no Transfer-Encoding) keeps `req.body`
 * undefined.
 */
export interface JsonBodyLimits {
  /** Bytes after decompression. */
  limit: number;
  maxDepth: number;
  maxValues: number;
}

export interface JsonBodyOptions extends JsonBodyLimits {
  /** Larger limits for `METHOD /path` (exact path, case-insensitive, trailing slash ignored). */
  routes?: Array<{ method: string; path: string } & JsonBodyLimits>;
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** `"42mb"`, `"2kb"`, `"1048576"` -> bytes (1024-based, as body-parser's limits were). */
export function parseByteSize(value: string | number): number {
  if (typeof value === 'number') return value;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(value);
  if (!m) throw new Error(`not a byte size: ${value}`);
  return Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]!);
}

const routeKey = (method: string, path: string) =>
  `${method.toUpperCase()} ${path.toLowerCase().replace(/\/+$/, '') || '/'}`;

function hasBody(req: HttpRequest): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

const isJsonType = (mediaType: string) =>
  mediaType === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(mediaType);

/** Media type and charset of the Content-Type header. */
function contentTypeOf(req: HttpRequest): { type: string; charset?: string } {
  const [type = '', ...params] = (req.headers['content-type'] ?? '').split(';');
  let charset: string | undefined;
  for (const p of params) {
    const m = /^\s*charset\s*=\s*"?([^";\s]*)"?\s*$/i.exec(p);
    if (m) charset = m[1]!.toLowerCase();
  }
  return { type: type.trim().toLowerCase(), charset };
}

function decoderFor(encoding: string): (() => NodeJS.ReadWriteStream) | null | undefined {
  switch (encoding) {
    case '':
    case 'identity':
      return null;
    case 'gzip':
    case 'x-gzip':
      return createGunzip;
    case 'deflate':
      return createInflate;
    case 'br':
      return createBrotliDecompress;
    default:
      return undefined;
  }
}

const aborted = () => Object.assign(new Error('request aborted'), { type: 'request.aborted' });

/** Why a body with these headers is refused before reading it, or null. */
function refusalOf(req: HttpRequest, limits: JsonBodyLimits): HttpError | null {
  const { type, charset } = contentTypeOf(req);
  if (!isJsonType(type)) return new HttpError(415, ErrorText.unsupportedMediaType);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    return new HttpError(415, InputErrorText.unsupportedCharset);
  if (decoderFor(encodingOf(req)) === undefined)
    return new HttpError(415, InputErrorText.unsupportedEncoding);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.limit)
    return new HttpError(413, ErrorText.payloadTooLarge);
  return null;
}

const encodingOf = (req: HttpRequest) =>
  String(req.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();

/** The limits of `METHOD path`: a route's own (JsonBodyOptions.routes), else the default ones. */
export function bodyLimitsOf(options: JsonBodyOptions): (method: string, path: string) => JsonBodyLimits {
  const byRoute = new Map((options.routes ?? []).map((r) => [routeKey(r.method, r.path), r]));
  return (method, path) => byRoute.get(routeKey(method, path)) ?? options;
}

/**
 * Reads the JSON body of `req` within `limits` into `req.body`, then `next()`; a refused body is
 * `next(err)`. jsonBody's step, callable without express (fast-route.ts).
 */
export function readJsonBody(req: HttpRequest, limits: JsonBodyLimits, next: HttpNext): void {
  if (!hasBody(req)) {
    next();
    return;
  }
  const refusal = refusalOf(req, limits);
  if (refusal) {
    req.resume(); // discard what is sent; nothing is buffered
    next(refusal);
    return;
  }
  const encoding = encodingOf(req);
  readBody(req, decoderFor(encoding)?.() ?? null, encoding, limits, next);
}

export function jsonBody(options: JsonBodyOptions): RequestHandler {
  const limitsOf = bodyLimitsOf(options);
  return (req: Request, _res: Response, next: NextFunction): void =>
    readJsonBody(req, limitsOf(req.method, req.path), next);
}

function readBody(
  req: HttpRequest,
  decoder: NodeJS.ReadWriteStream | null,
  encoding: string,
  limits: JsonBodyLimits,
  next: HttpNext,
): void {
  const stream: Readable = decoder ? (req.pipe(decoder) as unknown as Readable) : req;
  const scanner = new JsonShapeScanner(limits.maxDepth, limits.maxValues);
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;

  const cleanup = () => {
    stream.off('data', onData);
    stream.off('end', onEnd);
    stream.off('error', onDecodeError);
    req.off('error', onRequestError);
    req.off('close', onClose);
  };
  /** Ends reading: with an error (answered by next(err)), else with the parsed body (none when empty). */
  const settle = (outcome: { err: unknown } | { body: unknown }) => {
    if (settled) return;
    settled = true;
    cleanup();
    chunks.length = 0;
    if ('err' in outcome) {
      const { err } = outcome;
      if (decoder) {
        req.unpipe(decoder as unknown as NodeJS.WritableStream);
        (decoder as unknown as Readable).destroy();
      }
      req.resume(); // read and drop the rest, so the answer can be sent at once
      next(err);
      return;
    }
    req.body = outcome.body;
    next();
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limits.limit) return settle({ err: new HttpError(413, ErrorText.payloadTooLarge) });
    const problem = scanner.feed(chunk);
    if (problem === 'depth')
      return settle({ err: new HttpError(400, InputErrorText.tooDeep(limits.maxDepth)) });
    if (problem === 'values')
      return settle({ err: new HttpError(400, InputErrorText.tooManyValues(limits.maxValues)) });
    chunks.push(chunk);
  };
  const onEnd = () => {
    const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    if (!isUtf8(raw)) return settle({ err: new HttpError(400, InputErrorText.notUtf8) });
    const text = raw.toString('utf8');
    // An empty body reads as no body; a leading BOM is tolerated.
    if (text.trim() === '') return settle({ body: undefined });
    let body: unknown;
    try {
      body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch {
      return settle({ err: new HttpError(400, ErrorText.malformedJson) });
    }
    // Walked only when the text has a `\u` escape (the only source of unsafe text in UTF-8 JSON).
    const unsafe = mayHoldUnsafeText(text) ? findUnsafeText(body) : null;
    if (unsafe) return settle({ err: new HttpError(400, unsafe) });
    settle({ body });
  };
  const onDecodeError = () => settle({ err: new HttpError(400, InputErrorText.undecodable(encoding)) });
  const onRequestError = () => settle({ err: aborted() });
  const onClose = () => {
    if (!req.complete) settle({ err: aborted() });
  };

  stream.on('data', onData);
  stream.on('end', onEnd);
  if (decoder) stream.on('error', onDecodeError);
  req.on('error', onRequestError);
  req.on('close', onClose);
}
