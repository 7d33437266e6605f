/**
 * The settings of a test that runs the send and tracking services together against a local SMTP
 * receiver (tracking, suppressions, stats): fast outbox polling, no API-key cache, private
 * mailer hosts allowed (the receiver is on 127.0.0.1), the tracking service on `trackingPort`
 * with TRACKING_BASE_URL unset (links use http://127.0.0.1:<TRACKING_PORT>). One definition, so
 * these tests cannot drift apart on what "the tracked send set-up" means.
 */
export function trackedSendEnv(trackingPort: number): Record<string, string> {
  return {
    LOG_LEVEL: 'error',
    OUTBOX_POLL_MS: '50',
    API_KEY_CACHE_MS: '0',
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
    SERVICE_DOMAIN: 'mailyard.test',
    TRACKING_PORT: String(trackingPort),
    TRACKING_BASE_URL: '',
    HOST: '127.0.0.1',
  };
}
