import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { complaintReason, detectComplaint, returnPathCandidates } from './arf-detect';
import { readMime } from './report-mime';

const fixture = (name: string) => readMime(readFileSync(join(__dirname, 'fixtures', name)));
const VERP = 'bounce+01JB8W7Y3K5Q9M2N4P6R8T0V1X.1.k3v7q2m5x9z4w6ya@bounces.mailyard.test';
const ORIGINAL = {
  messageId: '<svc_mailer_01JB8W7Y3K5Q9M2N4P6R8T0V1X.1@mailyard.test>',
  returnPath: VERP,
  from: 'Brand News <news@brand.test>',
  subject: 'Spring sale',
  serviceSent: true,
};

describe('RFC 5965 feedback reports', () => {
  test('abuse report with the full original', () => {
    const r = detectComplaint(fixture('arf-abuse.eml'));
    expect(r).toEqual({
      kind: 'feedback',
      feedbackType: 'abuse',
      complaint: true,
      userAgent: 'SomeGenerator/1.0',
      originalMailFrom: VERP,
      originalRcptTo: ['ann@recipient.example'],
      arrivalDate: 'Thu, 26 Nov 2026 10:20:00 +0000',
      sourceIp: '192.0.2.10',
      reportedDomain: 'brand.test',
      original: ORIGINAL,
    });
    expect(complaintReason(r!)).toBe('Spam complaint (abuse) reported by SomeGenerator/1.0');
    expect(returnPathCandidates(r!)).toEqual([VERP, VERP]);
  });

  test('redacted report (no recipient, Original-Mail-From redacted): the original Return-Path remains', () => {
    const r = detectComplaint(fixture('arf-redacted.eml'));
    expect(r).toMatchObject({
      feedbackType: 'abuse',
      complaint: true,
      userAgent: 'Yahoo!-Mail-Feedback/2.0',
      originalMailFrom: 'redacted',
      originalRcptTo: [],
      original: { ...ORIGINAL },
    });
    expect(returnPathCandidates(r!)).toEqual(['redacted', VERP]);
  });

  test('not-spam is a report but not a complaint', () => {
    expect(detectComplaint(fixture('arf-not-spam.eml'))).toMatchObject({
      feedbackType: 'not-spam',
      complaint: false,
    });
  });

  test.each(['postfix-hard.eml', 'gmail.eml', 'autoreply-rfc3834.eml', 'human-reply.eml'])(
    '%s is not a feedback report',
    (name) => {
      expect(detectComplaint(fixture(name))).toBeNull();
    },
  );
});
