/**
 * Open and click tracking for one rendered copy (pure; the caller signs the URLs).
 *
 * HTML (`rewriteHtml`): one pass of htmlparser2's Tokenizer (linear time, comments, scripts and
 * styles handled as browsers do) finds every `href` of `<a>` and `<area>`; the original source
 * is kept byte for byte except for the rewritten attributes, which become `href="<click URL>"`.
 * - Only absolute http(s) URLs are wrapped. `mailto:`, `tel:`, anchors (`#...`), relative and
 *   other schemes are left alone, and so are unsubscribe links (URL containing unsubscribe or
 *   opt-out) and links marked `clicktracking="off"` (SendGrid's convention).
 * - The value is entity-decoded before wrapping, as a browser would read it: the signed target
 *   of `?a=1&amp;b=2` is `?a=1&b=2`, so signed URLs (WordPress nonces, S3 links) survive.
 * - Open tracking adds a 1x1 pixel just before the last `</body>`, or at the end.
 *
 * Text (`rewriteText`): absolute http(s) URLs (up to whitespace, `<`, `>`, quotes; trailing
 * sentence punctuation excluded) are replaced by their click URL, with the same exclusions.
 */
import { Tokenizer } from 'htmlparser2';

export type ClickUrl = (originalUrl: string) => string;

export interface HtmlTracking {
  /** Wraps an original URL; omit to leave links alone (click tracking off). */
  clickUrl?: ClickUrl;
  /** The open pixel's URL; omit for no pixel (open tracking off). */
  pixelUrl?: string;
}

const TRACKABLE = /^https?:\/\/[^\s]/i;
const UNSUBSCRIBE = /unsubscribe|opt-?out|opt_out/i;

/** True for the URLs the service wraps. */
export function isTrackableUrl(url: string): boolean {
  return TRACKABLE.test(url) && !UNSUBSCRIBE.test(url);
}

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

export function pixelTag(pixelUrl: string): string {
  return `<img src="${attr(pixelUrl)}" width="1" height="1" alt="" border="0" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0" />`;
}

interface Replacement {
  start: number;
  end: number;
  text: string;
}

export function rewriteHtml(html: string, opts: HtmlTracking): string {
  const replacements: Replacement[] = [];
  if (opts.clickUrl) replacements.push(...linkReplacements(html, opts.clickUrl));
  if (opts.pixelUrl) {
    const at = html.toLowerCase().lastIndexOf('</body');
    const pos = at === -1 ? html.length : at;
    replacements.push({ start: pos, end: pos, text: pixelTag(opts.pixelUrl) });
  }
  replacements.sort((a, b) => a.start - b.start);
  let out = '';
  let from = 0;
  for (const r of replacements) {
    if (r.start < from) continue;
    out += html.slice(from, r.start) + r.text;
    from = r.end;
  }
  return out + html.slice(from);
}

/** The href attributes to rewrite, as source ranges (name start to value end). */
function linkReplacements(html: string, clickUrl: ClickUrl): Replacement[] {
  const out: Replacement[] = [];
  let inLink = false;
  let attrName = '';
  let attrStart = 0;
  let value = '';
  let href: { start: number; end: number; url: string } | null = null;
  let optOut = false;
  const cbs = {
    onopentagname(start: number, end: number) {
      const name = html.slice(start, end).toLowerCase();
      inLink = name === 'a' || name === 'area';
      href = null;
      optOut = false;
    },
    onattribname(start: number, end: number) {
      attrName = inLink ? html.slice(start, end).toLowerCase() : '';
      attrStart = start;
      value = '';
    },
    onattribdata(start: number, end: number) {
      if (attrName) value += html.slice(start, end);
    },
    onattribentity(codepoint: number) {
      if (attrName) value += String.fromCodePoint(codepoint);
    },
    onattribend(_quote: number, end: number) {
      if (attrName === 'href' && href === null) href = { start: attrStart, end, url: value.trim() };
      else if (attrName === 'clicktracking' && value.trim().toLowerCase() === 'off') optOut = true;
      attrName = '';
    },
    onopentagend() {
      finishTag();
    },
    onselfclosingtag() {
      finishTag();
    },
    oncdata() {},
    onclosetag() {},
    oncomment() {},
    ondeclaration() {},
    onend() {},
    onprocessinginstruction() {},
    ontext() {},
    ontextentity() {},
  };
  function finishTag() {
    const h = href as { start: number; end: number; url: string } | null;
    if (inLink && h && !optOut && isTrackableUrl(h.url)) {
      out.push({ start: h.start, end: h.end, text: `href="${attr(clickUrl(h.url))}"` });
    }
    inLink = false;
    href = null;
  }
  const tokenizer = new Tokenizer({ decodeEntities: true }, cbs);
  tokenizer.write(html);
  tokenizer.end();
  return out;
}

const TEXT_URL = /https?:\/\/[^\s<>"']+/gi;
const TRAILING = new Set(['.', ',', ';', ':', '!', '?', ')', ']', '}', "'"]);

export function rewriteText(text: string, clickUrl: ClickUrl): string {
  return text.replace(TEXT_URL, (match) => {
    let end = match.length;
    while (end > 0 && TRAILING.has(match[end - 1]!)) end--;
    const url = match.slice(0, end);
    if (!isTrackableUrl(url)) return match;
    return clickUrl(url) + match.slice(end);
  });
}
