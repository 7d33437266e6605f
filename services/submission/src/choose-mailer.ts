/**
 * Which mailer sends a submitted message (docs/submission.md "Which mailer sends"), a pure
 * decision: the X-Mailyard-Mailer header's mailer when present (the shared acceptance then
 * refuses it when it is not the tenant's or may not send); else the tenant's mailer whose address
 * is the envelope sender; else the domain mailer of the tenant's verified sending domain of the
 * sender's domain (or its closest parent); else none: `550 5.7.1`.
 */
import type { SubmissionMailerCandidates } from '@mailyard/store';

export type MailerChoice = { ok: true; mailerId: string } | { ok: false; code: 550; message: string };

export function chooseMailer(
  header: string | null,
  sender: string,
  candidates: SubmissionMailerCandidates | null,
): MailerChoice {
  if (header !== null && header !== '') return { ok: true, mailerId: header };
  const id = candidates?.byAddress ?? candidates?.byDomain;
  if (id) return { ok: true, mailerId: id };
  return {
    ok: false,
    code: 550,
    message: `5.7.1 Sender ${sender} is not one of your mailers or verified domains (or name one with X-Mailyard-Mailer)`,
  };
}
