/**
 * SparkPost's documented webhook samples (developers.sparkpost.com/api/webhooks, "Webhook Event
 * Types": the sample of each event type, same field names and values), for tests: `sparkPostSample`
 * returns one batch entry `{msys: {<class>_event: {...}}}` of a type, with the fields a test names
 * replaced (our `rcpt_meta`, the recipient, the event id, the time). Not used by product code.
 */

const COMMON = {
  campaign_id: 'Example Campaign Name',
  customer_id: '1',
  delv_method: 'esmtp',
  event_id: '92356927693813856',
  friendly_from: 'sender@example.com',
  injection_time: '2016-04-18T14:25:07.000Z',
  ip_address: '127.0.0.1',
  ip_pool: 'Example-Ip-Pool',
  message_id: '000443ee14578172be22',
  msg_from: 'sender@example.com',
  msg_size: '1337',
  rcpt_meta: { customKey: 'customValue' },
  rcpt_tags: ['male', 'US'],
  rcpt_to: 'recipient@example.com',
  raw_rcpt_to: 'recipient@example.com',
  rcpt_type: 'cc',
  routing_domain: 'example.com',
  sending_ip: '127.0.0.1',
  subaccount_id: '101',
  subject: 'Summer deals are here!',
  template_id: 'templ-1234',
  template_version: '1',
  timestamp: '1454442600',
  transmission_id: '65832150921904138',
  click_tracking: true,
  open_tracking: true,
  initial_pixel: true,
};

/** The sample body of each type, and the class (msys member) it comes in. */
const SAMPLES: Record<string, { cls: string; fields: Record<string, unknown> }> = {
  delivery: {
    cls: 'message_event',
    fields: { ...COMMON, type: 'delivery', queue_time: '12', num_retries: '2', outbound_tls: '1' },
  },
  bounce: {
    cls: 'message_event',
    fields: {
      ...COMMON,
      type: 'bounce',
      bounce_class: '1',
      error_code: '554',
      num_retries: '2',
      raw_reason: '554 5.5.0 Recipient address rejected',
      reason: '000 Example Remote MTA Bounce Message',
    },
  },
  out_of_band: {
    cls: 'message_event',
    fields: {
      ...COMMON,
      type: 'out_of_band',
      bounce_class: '1',
      error_code: '554',
      raw_reason: "550: 5.7.1 Unfortunately, messages from 127.0.0.1 weren't sent.",
      reason: "550: 5.7.1 Unfortunately, messages from 127.0.0.1 weren't sent.",
      num_retries: '0',
    },
  },
  spam_complaint: {
    cls: 'message_event',
    fields: {
      ...COMMON,
      type: 'spam_complaint',
      fbtype: 'abuse',
      report_by: 'server.email.com',
      report_to: 'abuse.example.com',
      user_str: 'Additional Example Information',
    },
  },
  policy_rejection: {
    cls: 'message_event',
    fields: {
      ...COMMON,
      type: 'policy_rejection',
      error_code: '554',
      raw_reason: '550 5.7.1 Unsubscribed recipient',
      reason: '550 5.7.1 [internal] Forbidden',
      remote_addr: '127.0.0.1',
      bounce_class: '25',
    },
  },
  generation_failure: {
    cls: 'gen_event',
    fields: {
      ...COMMON,
      type: 'generation_failure',
      error_code: '554',
      raw_reason:
        "554 5.3.3 [internal] Error while rendering part html: substitution value 'name' did not match",
      reason: "554 5.3.3 [internal] Error while rendering part html: substitution value 'name' did not match",
      rcpt_subs: { city: 'Columbia' },
    },
  },
  generation_rejection: {
    cls: 'gen_event',
    fields: {
      ...COMMON,
      type: 'generation_rejection',
      error_code: '554',
      raw_reason: '554 5.7.1 recipient address suppressed due to customer policy',
      reason: '554 5.7.1 recipient address suppressed due to customer policy',
      bounce_class: '25',
    },
  },
  list_unsubscribe: {
    cls: 'unsubscribe_event',
    fields: { ...COMMON, type: 'list_unsubscribe', mailfrom: 'recipient@example.com' },
  },
  link_unsubscribe: {
    cls: 'unsubscribe_event',
    fields: {
      ...COMMON,
      type: 'link_unsubscribe',
      mailfrom: 'recipient@example.com',
      user_agent:
        'Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/44.0.2403.157 Safari/537.36',
    },
  },
  injection: { cls: 'message_event', fields: { ...COMMON, type: 'injection' } },
  delay: {
    cls: 'message_event',
    fields: {
      ...COMMON,
      type: 'delay',
      bounce_class: '1',
      error_code: '454',
      num_retries: '1',
      queue_time: '12',
      raw_reason: '454 4.4.4 [internal] no MX or A for domain',
      reason: '454 4.4.4 [internal] no MX or A for domain',
    },
  },
  open: {
    cls: 'track_event',
    fields: {
      ...COMMON,
      type: 'open',
      geo_ip: { country: 'US', city: 'Columbia' },
      user_agent: 'Mozilla/5.0',
    },
  },
  initial_open: {
    cls: 'track_event',
    fields: { ...COMMON, type: 'initial_open', user_agent: 'Mozilla/5.0' },
  },
  click: {
    cls: 'track_event',
    fields: { ...COMMON, type: 'click', target_link_url: 'http://example.com', user_agent: 'Mozilla/5.0' },
  },
  amp_open: { cls: 'track_event', fields: { ...COMMON, type: 'amp_open', user_agent: 'Mozilla/5.0' } },
  relay_injection: {
    cls: 'relay_event',
    fields: {
      type: 'relay_injection',
      event_id: '92356927693813856',
      timestamp: '1454442600',
      relay_id: 'example-relay-id',
      msg_from: 'me@here.com',
      rcpt_to: 'you@there.com',
    },
  },
};

export const SPARKPOST_SAMPLE_TYPES = Object.keys(SAMPLES);

/** One batch entry of `type` from SparkPost's sample, `overrides` replacing its fields. */
export function sparkPostSample(
  type: string,
  overrides: Record<string, unknown> = {},
): { msys: Record<string, Record<string, unknown>> } {
  const sample = SAMPLES[type];
  if (!sample) throw new Error(`no SparkPost sample of type ${type}`);
  return { msys: { [sample.cls]: { ...sample.fields, ...overrides } } };
}
