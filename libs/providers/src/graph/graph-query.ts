/**
 * Query strings of Microsoft Graph message listings (pure).
 *
 * - Window without participant: `$filter` on receivedDateTime (exact, whole seconds; paging has
 *   no result cap), `$orderby=receivedDateTime desc` (orderby properties must appear in the
 *   filter first, "List messages").
 * - Participant: `$search` with KQL `participants:` (from, to, cc and bcc; "Use the $search
 *   query parameter"). $search cannot be combined with $filter on messages, so the window goes
 *   into the KQL as `received>=` / `received<=` dates. KQL dates are days, read in a time zone
 *   Graph does not state, so the range is one day wider on each side and callers keep the
 *   messages whose receivedDateTime is in the exact window. A $search answers at most 1000
 *   results (search-window.ts splits windows that reach it).
 */
import { assertSearchableAddress } from '../api/search-address';

export interface GraphWindow {
  /** Inclusive (whole seconds). */
  since: Date;
  /** Inclusive (whole seconds). */
  until: Date;
}

/** The message fields every listing selects. */
export const MESSAGE_REF_FIELDS = 'id,receivedDateTime,internetMessageId,conversationId,parentFolderId';

const DAY_MS = 86_400_000;

/** `2024-01-02T03:04:05Z`: an OData DateTimeOffset literal in whole seconds, UTC. */
export function odataDateTime(d: Date): string {
  return new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** `2024-01-02`: a KQL date. */
export function kqlDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export function receivedFilter(w: GraphWindow): string {
  const until = new Date(Math.floor(w.until.getTime() / 1000) * 1000 + 1000);
  return `receivedDateTime ge ${odataDateTime(w.since)} and receivedDateTime lt ${odataDateTime(until)}`;
}

/** The `$search` value (quotes included) for a participant within a window. */
export function participantSearch(participant: string, w: GraphWindow): string {
  const p = participant.trim();
  assertSearchableAddress(p);
  const from = kqlDate(new Date(w.since.getTime() - DAY_MS));
  const to = kqlDate(new Date(w.until.getTime() + DAY_MS));
  return `"participants:${p} AND received>=${from} AND received<=${to}"`;
}

/** Query parameters of one listing of a folder's messages in `w`. */
export function listParams(w: GraphWindow, participant: string | null, top: number): URLSearchParams {
  const params = new URLSearchParams({ $select: MESSAGE_REF_FIELDS, $top: String(top) });
  if (participant) params.set('$search', participantSearch(participant, w));
  else {
    params.set('$filter', receivedFilter(w));
    params.set('$orderby', 'receivedDateTime desc');
  }
  return params;
}

/** True when `receivedAt` lies in the inclusive window (whole seconds). */
export function inGraphWindow(receivedAt: Date, w: GraphWindow): boolean {
  const t = Math.floor(receivedAt.getTime() / 1000);
  return t >= Math.floor(w.since.getTime() / 1000) && t <= Math.floor(w.until.getTime() / 1000);
}
