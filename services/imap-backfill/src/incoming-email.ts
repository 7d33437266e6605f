/**
 * The INCOMING_EMAIL payload of a fetched message: the shared builder of libs/platform
 * (mail/incoming-email.ts, the same as inbound mail uses) with `mailer-service: "imap"` and the
 * folder as `label-ids`.
 */
export interface IncomingEmailContext {
  mailerId: string;
  /** The mailer's incoming webhook is identified by the mailer. */
  webhookId: string;
  /** The mailer's own address: the mailbox that received it. */
  recipient: string;
  folder: string;
}

export type BuildIncomingEmail = (source: Buffer, ctx: IncomingEmailContext) => Promise<Record<string, unknown>>;
