import { readMime } from '../report-mime';
import { MAX_REPORT_ATTACHMENTS, reportAttachments } from './report-parts';

const XML = '<?xml version="1.0"?><feedback/>';

function multipart(parts: { headers: string[]; body: string }[]): Buffer {
  const lines = [
    'From: r@reporter.example',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="B"',
    '',
  ];
  for (const p of parts) lines.push('--B', ...p.headers, '', p.body);
  lines.push('--B--', '');
  return Buffer.from(lines.join('\r\n'));
}
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

test('DMARC: each report-typed or report-named attachment, decoded; the text part is not one', () => {
  const mail = readMime(
    multipart([
      { headers: ['Content-Type: text/plain'], body: 'This is a DMARC aggregate report.' },
      {
        headers: ['Content-Type: application/gzip; name="a.xml.gz"', 'Content-Transfer-Encoding: base64'],
        body: b64('gz-bytes'),
      },
      {
        headers: [
          'Content-Type: application/octet-stream',
          'Content-Disposition: attachment; filename="b.zip"',
          'Content-Transfer-Encoding: base64',
        ],
        body: b64('zip-bytes'),
      },
      { headers: ['Content-Type: text/xml'], body: XML },
      { headers: ['Content-Type: image/png; name="logo.png"'], body: 'png' },
    ]),
  );
  expect(reportAttachments(mail, 'dmarc')).toEqual([
    { name: 'a.xml.gz', type: 'application/gzip', bytes: Buffer.from('gz-bytes') },
    { name: 'b.zip', type: 'application/octet-stream', bytes: Buffer.from('zip-bytes') },
    { name: '', type: 'text/xml', bytes: Buffer.from(XML) },
  ]);
  // the TLS-RPT reader takes the gzip only
  expect(reportAttachments(mail, 'tls_rpt').map((a) => a.name)).toEqual(['a.xml.gz']);
});

test('a report sent as the whole body is found; TLS-RPT media types', () => {
  const whole = readMime(Buffer.from(`Content-Type: application/xml\r\n\r\n${XML}`));
  expect(reportAttachments(whole, 'dmarc').map((a) => a.bytes.toString())).toEqual([XML]);
  const tls = readMime(
    multipart([
      {
        headers: ['Content-Type: application/tlsrpt+gzip', 'Content-Transfer-Encoding: base64'],
        body: b64('x'),
      },
      { headers: ['Content-Type: application/tlsrpt+json'], body: '{}' },
    ]),
  );
  expect(reportAttachments(tls, 'tls_rpt').map((a) => a.type)).toEqual([
    'application/tlsrpt+gzip',
    'application/tlsrpt+json',
  ]);
  expect(reportAttachments(tls, 'dmarc')).toEqual([]);
});

test(`at most ${MAX_REPORT_ATTACHMENTS} attachments per message`, () => {
  const many = readMime(
    multipart(Array.from({ length: 30 }, () => ({ headers: ['Content-Type: text/xml'], body: XML }))),
  );
  expect(reportAttachments(many, 'dmarc')).toHaveLength(MAX_REPORT_ATTACHMENTS);
});
