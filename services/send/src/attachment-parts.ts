/**
 * Attachments are MIME-encoded once per send, not once per copy: a send with substitutions has a
 * copy per `to` recipient, and each would otherwise decode the stored base64 into a Buffer and
 * encode it again (the 24 copies x 9 MB case of issue 7 held a decoded and an encoded version per
 * copy in flight). Each attachment becomes one finished MIME part (headers and base64 body,
 * built by nodemailer's own MimeNode with the same headers MailComposer would write), passed to
 * MailComposer as `raw`; `cid` still files inline parts under multipart/related.
 *
 * The parts are cached per stored request object (a WeakMap on its `attachments` array): the
 * copies of a send share the request through RequestCache, so they share its parts, and both go
 * away together. message/* attachments (never base64, RFC 2046 5.2.1) keep MailComposer's path.
 */
import type { StoredSendRequest } from '@mailyard/contracts';
import { detectMimeType } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { sliced } from './slices';

type StoredAttachment = NonNullable<StoredSendRequest['attachments']>[number];

/** What MailComposer takes for one attachment. */
export type ComposerAttachment =
  | { raw: Buffer; cid?: string }
  | {
      filename: string;
      content: Buffer;
      contentType?: string;
      contentDisposition?: 'attachment' | 'inline';
      cid?: string;
    };

const parts = new WeakMap<readonly StoredAttachment[], Promise<ComposerAttachment[]>>();

/** The request's attachments, ready for MailComposer; encoded on the first call per request. */
export function composerAttachments(
  request: Pick<StoredSendRequest, 'attachments'>,
): Promise<ComposerAttachment[]> {
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

async function encodeOne(a: StoredAttachment): Promise<ComposerAttachment> {
  const content = Buffer.from(a.content, 'base64');
  const contentType = a.type || detectMimeType(a.filename || 'bin');
  if (/^message\//i.test(contentType)) {
    return {
      filename: a.filename,
      content,
      ...(a.type ? { contentType: a.type } : {}),
      contentDisposition: a.disposition,
      ...(a.content_id ? { cid: a.content_id } : {}),
    };
  }
  const isImage = /^image\//i.test(contentType);
  const disposition = a.disposition || (isImage && a.content_id ? 'inline' : 'attachment');
  // A child of a throwaway root, so no message-level headers are added; header order as in
  // MailComposer._createContentNode.
  const node = new MimeNode('multipart/mixed').createChild(contentType, { filename: a.filename });
  if (a.content_id) node.setHeader('Content-Id', `<${a.content_id.replace(/[<>]/g, '')}>`);
  node.setHeader('Content-Transfer-Encoding', 'base64');
  node.setHeader('Content-Disposition', disposition);
  node.setContent(sliced(content)); // base64 in slices (slices.ts)
  const built: Buffer = await node.build();
  // MailComposer puts a line break before the next boundary itself.
  const raw = built.subarray(0, built.length - (built.subarray(-2).toString() === '\r\n' ? 2 : 0));
  return a.content_id ? { raw, cid: a.content_id } : { raw };
}
