/**
 * Renders one copy's subject and bodies from the stored request. The gateway resolved the
 * template at accept time (`sends.request` holds subject and content: the request's override,
 * else the template's as it was then), so rendering is only `{{variable}}` replacement:
 *
 * - `{{name}}` and `{{ name }}` are replaced with the copy recipient's substitution value;
 *   names are letters, digits, `_`, `-` and `.`; a variable with no value renders empty.
 * - In text/html bodies the value is HTML-escaped (`& < > " '`), so a substitution can never
 *   inject markup or break out of an attribute. Subject and text/plain take it verbatim, except
 *   that line breaks in the subject become spaces (a header stays one logical line).
 */
import { type Content, SEND_LIMITS, type StoredSendRequest } from '@mailyard/contracts';

export class RenderError extends Error {
  override name = 'RenderError';
}

export interface RenderedCopy {
  subject: string;
  html?: string;
  text?: string;
}

const VARIABLE = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!);
}

/** Characters a copy may still grow by; substitution stops (RenderError) when it runs out. */
export interface RenderBudget {
  remaining: number;
}

export interface SubstituteOptions {
  /** Applied to each substituted value (HTML escaping, header folding); default: as is. */
  encode?: (v: string) => string;
  budget?: RenderBudget;
}

/** Replaces every `{{variable}}` in `template`, encoding and budgeting as `opts` say. */
export function substitute(
  template: string,
  vars: Record<string, string>,
  opts: SubstituteOptions = {},
): string {
  const encode = opts.encode ?? ((v: string) => v);
  const budget = opts.budget ?? { remaining: Number.POSITIVE_INFINITY };
  budget.remaining -= template.length;
  if (budget.remaining < 0) throw new RenderError(TOO_LARGE);
  return template.replace(VARIABLE, (_, name: string) => {
    const value = Object.hasOwn(vars, name) ? vars[name] : undefined;
    const out = value === undefined || value === null ? '' : encode(String(value));
    // Checked per value, so a small template repeating a long value cannot exhaust memory.
    budget.remaining -= out.length;
    if (budget.remaining < 0) throw new RenderError(TOO_LARGE);
    return out;
  });
}

const TOO_LARGE = `The rendered message exceeds ${SEND_LIMITS.maxMessageBytes / (1024 * 1024)} MB`;

/** Renders subject and bodies for one copy. Throws RenderError when the request cannot be rendered. */
export function renderCopy(
  request: Pick<StoredSendRequest, 'subject' | 'content'>,
  vars: Record<string, string>,
): RenderedCopy {
  if (typeof request.subject !== 'string') throw new RenderError('The send has no subject to render');
  if (!Array.isArray(request.content) || request.content.length === 0)
    throw new RenderError('The send has no content to render');
  // Characters, not bytes: a cheap bound that stops runaway substitution long before memory does.
  const budget: RenderBudget = { remaining: SEND_LIMITS.maxMessageBytes };
  const out: RenderedCopy = {
    subject: substitute(request.subject, vars, { encode: (v) => v.replace(/[\r\n]+/g, ' '), budget }),
  };
  for (const c of request.content as Content[]) {
    if (typeof c?.value !== 'string') throw new RenderError('A content entry has no value');
    if (c.type === 'text/html') out.html = substitute(c.value, vars, { encode: escapeHtml, budget });
    else if (c.type === 'text/plain') out.text = substitute(c.value, vars, { budget });
    else throw new RenderError(`Unsupported content type ${JSON.stringify((c as { type?: unknown }).type)}`);
  }
  return out;
}
