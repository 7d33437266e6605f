/**
 * The request and response as the shared middleware sees them: node's own objects (express's
 * Request and Response are these plus more), so the same functions serve express's chain and
 * the routes answered without express (fast-route.ts). `locals` is express's per-request bag;
 * a fast route creates it as express does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type HttpRequest = IncomingMessage & { body?: unknown };
// biome-ignore lint/suspicious/noExplicitAny: the type of express's res.locals
export type HttpResponse = ServerResponse & { locals: Record<string, any> };
/** express's `next`: no argument (or a falsy one) continues, an error is answered by the error handler. */
export type HttpNext = (err?: unknown) => void;
export type HttpMiddleware = (req: HttpRequest, res: HttpResponse, next: HttpNext) => unknown;
