import { randomBytes } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import { attachmentParts } from './attachments';

const request = (content: Buffer) => ({
  attachments: [
    {
      filename: 'résumé.pdf',
      content: content.toString('base64'),
      type: 'application/pdf',
      disposition: 'attachment' as const,
    },
    {
      filename: 'logo.png',
      content: Buffer.from('PNGDATA').toString('base64'),
      type: 'image/png',
      disposition: 'inline' as const,
      content_id: 'logo1',
    },
  ],
});

/** A fixed message around `attachments`, so two builds can be compared byte for byte. */
function compose(attachments: unknown[]) {
  return new MailComposer({
    from: 'a@example.org',
    to: 'b@example.com',
    subject: 's',
    html: '<p><img src="cid:logo1"></p>',
    date: new Date(0),
    messageId: '<m@example.org>',
    baseBoundary: 'fixed',
    attachments: attachments as never,
  })
    .compile()
    .build();
}

describe('attachmentParts', () => {
  it('encodes a send’s attachments once, for every copy', async () => {
    const r = request(randomBytes(3 * 1024 * 1024));
    const first = attachmentParts(r);
    expect(attachmentParts(r)).toBe(first);
    expect(attachmentParts({ attachments: [...r.attachments] })).not.toBe(first);
  });

  it('gives the same message MailComposer builds from the decoded content', async () => {
    const content = randomBytes(3 * 1024 * 1024 + 7);
    const r = request(content);
    const direct = await compose(
      r.attachments.map((a) => ({
        filename: a.filename,
        content: Buffer.from(a.content, 'base64'),
        contentType: a.type,
        contentDisposition: a.disposition,
        ...(a.content_id ? { cid: a.content_id } : {}),
      })),
    );
    const viaParts = await compose(await attachmentParts(r));
    expect(viaParts.toString()).toBe(direct.toString());
  });
});
