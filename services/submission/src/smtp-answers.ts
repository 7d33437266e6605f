/**
 * The SMTP answer of a send the shared acceptance refused (libs/store send-accept: it throws the
 * API's HttpError with the API's message), a pure mapping so an SMTP client reads the same reason
 * an API client would: the mailer not the tenant's or unable to send (404, 422) `550 5.7.1`, too
 * large (413) `552 5.3.4`, an invalid request (400) `550 5.6.0`, a conflict (409) or anything
 * unexpected `451 4.3.0` (try again; nothing was stored).
 */
export interface SmtpAnswer {
  code: number;
  message: string;
}

export function answerForRefusal(status: number | undefined, message: string): SmtpAnswer {
  const text = message.replace(/[\r\n]+/g, ' ').slice(0, 400);
  if (status === 404 || status === 422) return { code: 550, message: `5.7.1 ${text}` };
  if (status === 413) return { code: 552, message: `5.3.4 ${text}` };
  if (status === 400) return { code: 550, message: `5.6.0 ${text}` };
  return { code: 451, message: '4.3.0 Temporary failure, try again later' };
}
