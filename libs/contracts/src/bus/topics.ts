/** Exchanges (DESIGN.md "Bus"): one durable topic exchange per direction. */
export const Exchange = {
  commands: 'mailyard.commands',
  events: 'mailyard.events',
} as const;
export type ExchangeName = (typeof Exchange)[keyof typeof Exchange];

/** Routing keys. Events use `<area>.<event>` so consumers can bind `email.#`. */
export const RoutingKey = {
  sendEmail: 'send.email',
  emailEvent: (event: string) => `email.${event.toLowerCase()}`,
  domainVerification: 'domain.verification',
  mailerDeactivated: 'mailer.deactivated',
} as const;

/** Durable work queues, one per consuming service. */
export const Queue = {
  send: 'send.commands',
  webhookDispatcher: 'webhook-dispatcher.events',
  logUpdater: 'send.log-events',
} as const;
