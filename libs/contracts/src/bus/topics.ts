/** Exchanges (docs/architecture.md "Stores and the bus"): one durable topic exchange per direction. */
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
  sendingPaused: 'sending.paused',
  mailerWebhook: 'mailer.webhook',
} as const;

/** Durable work queues, one per consuming service. */
export const Queue = {
  send: 'send.commands',
  webhookDispatcher: 'webhook-dispatcher.events',
} as const;

export interface QueueDeclaration {
  queue: string;
  bindings: ReadonlyArray<{ exchange: ExchangeName; routingKey: string }>;
}

/**
 * Work queues every process declares when its bus connects. A topic exchange drops messages
 * no queue is bound to, so a command published before its consumer's first start would
 * otherwise be lost; declared up front, it waits in the queue.
 */
export const WorkQueues = {
  send: { queue: Queue.send, bindings: [{ exchange: Exchange.commands, routingKey: RoutingKey.sendEmail }] },
  /** Every email event, DOMAIN_VERIFICATION, MAILER_DEACTIVATED and SENDING_PAUSED (services/webhook-dispatcher). */
  webhookDispatcher: {
    queue: Queue.webhookDispatcher,
    bindings: [
      { exchange: Exchange.events, routingKey: 'email.#' },
      { exchange: Exchange.events, routingKey: RoutingKey.domainVerification },
      { exchange: Exchange.events, routingKey: RoutingKey.mailerDeactivated },
      { exchange: Exchange.events, routingKey: RoutingKey.sendingPaused },
      { exchange: Exchange.events, routingKey: RoutingKey.mailerWebhook },
    ],
  },
} as const satisfies Record<string, QueueDeclaration>;
