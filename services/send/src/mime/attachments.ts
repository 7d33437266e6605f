/**
 * Attachments are MIME-encoded once per send, not once per copy: a send with substitutions has a
 * copy per `to` recipient, and each would otherwise decode the stored base64 into a Buffer and
 * encode it again (the 24 copies x 9 MB case of issue 7 held a decoded and an encoded version per
 * copy in flight). Each attachment becomes one finished MIME part (its header block and body,
 * built through nodemailer MimeNode's public API), written into every copy as it is; `cid`
 * files inline parts under multipart/related (multipart.ts).
 *
 * - Content-Type the given type, else the one the filename's extension names; the filename as
 *   `name` and `filename` parameters; Content-ID `<content_id>`; Content-Disposition as given,
 *   else `inline` for an image with a content id and `attachment` for the rest.
 * - base64, in slices (slices.ts), except message/* attachments (never base64, RFC 2046 5.2.1):
 *   7bit when they fit (ASCII, lines up to 998), else 8bit, disposition `inline` by default.
 *
 * The parts are cached per stored request object (a WeakMap on its `attachments` array): the
 * copies of a send share the request through RequestCache, so they share its parts, and both go
 * away together.
 */
import type { StoredSendRequest } from '@mailyard/contracts';
import { detectMimeType } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { sliced } from '../slices';

type StoredAttachment = NonNullable<StoredSendRequest['attachments']>[number];

/** One finished attachment part; `cid` when it has a content id. */
export interface AttachmentPart {
  raw: Buffer;
  cid?: string;
}

const parts = new WeakMap<readonly StoredAttachment[], Promise<AttachmentPart[]>>();

/** The request's attachments as finished parts; encoded on the first call per request. */
export function attachmentParts(request: Pick<StoredSendRequest, 'attachments'>): Promise<AttachmentPart[]> {
  const list = request.attachments;
  if (!list || list.length === 0) return Promise.resolve([]);
  let encoded = parts.get(list);
  if (!encoded) {
    encoded = Promise.all(list.map(encodeOne));
    // A failure is not cached: the next copy tries again (and fails the same way if it must).
    encoded.catch(() => parts.delete(list));
    parts.set(list, encoded);
  }
  return encoded;
}

async function encodeOne(a: StoredAttachment): Promise<AttachmentPart> {
  const content = Buffer.from(a.content, 'base64');
  const contentType = a.type || detectMimeType(a.filename || 'bin');
  if (/^message\//i.test(contentType)) return messagePart(a, contentType, content);
  const isImage = /^image\//i.test(contentType);
  const disposition = a.disposition || (isImage && a.content_id ? 'inline' : 'attachment');
  const node = partNode(a, contentType, 'base64', disposition);
  node.setContent(sliced(content)); // base64 in slices (slices.ts)
  const built: Buffer = await node.build();
  // The line break before the next boundary is the multipart writer's.
  const raw = built.subarray(0, built.length - (built.subarray(-2).toString() === '\r\n' ? 2 : 0));
  return a.content_id ? { raw, cid: a.content_id } : { raw };
}

/** A part node with its headers in the order MailComposer sets them. */
function partNode(a: StoredAttachment, contentType: string, transferEncoding: string, disposition: string) {
  // A child of a throwaway root, so no message-level headers are added.
  const node = new MimeNode('multipart/mixed').createChild(contentType, { filename: a.filename });
  if (a.content_id) node.setHeader('Content-Id', `<${a.content_id.replace(/[<>]/g, '')}>`);
  node.setHeader('Content-Transfer-Encoding', transferEncoding);
  node.setHeader('Content-Disposition', disposition);
  return node;
}

/** Whether content is 7bit: no NUL, no 8-bit byte, no line over 998. */
function fitsSevenBit(content: Buffer): boolean {
  let lineLength = 0;
  for (const c of content) {
    if (c === 0 || c > 0x7f) return false;
    if (c === 0x0a || c === 0x0d) lineLength = 0;
    else if (++lineLength > 998) return false;
  }
  return true;
}

/** A message/* attachment: its header block and the content as it is (7bit or 8bit). */
function messagePart(a: StoredAttachment, contentType: string, content: Buffer): AttachmentPart {
  const node = partNode(a, contentType, fitsSevenBit(content) ? '7bit' : '8bit', a.disposition || 'inline');
  node.setContent(content);
  const raw = Buffer.concat([Buffer.from(`${node.buildHeaders()}\r\n\r\n`), content]);
  return a.content_id ? { raw, cid: a.content_id } : { raw };
}
