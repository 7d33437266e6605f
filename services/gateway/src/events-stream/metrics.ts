/** The live event stream's metrics on the gateway's /metrics (docs/operations.md "Live events"). */
import { counter, gauge } from '@mailyard/platform';

export const streamsConnected = gauge(
  'mailyard_event_streams_connected',
  'Clients connected to GET /v1/events/stream in this process',
);
export const streamEventsSent = counter(
  'mailyard_event_stream_events_sent_total',
  'Events written to event-stream clients (one per client an event was sent to)',
);
export const streamClientsDropped = counter(
  'mailyard_event_stream_clients_dropped_total',
  'Event-stream clients disconnected by the gateway: slow (stopped reading, buffer cap reached)',
  ['reason'],
);
export const streamsRefused = counter(
  'mailyard_event_streams_refused_total',
  'Event-stream connections refused at a limit (tenant: 429, process: 503)',
  ['limit'],
);
