/**
 * Builds the parameters of a Gmail `users.messages.list` call from a listing query (pure).
 *
 * - Window: `after:` / `before:` with epoch seconds (the Gmail API guide "Searching for
 *   messages": seconds give exact times where dates are day-precise in the account's time
 *   zone). Google does not document whether the bounds are inclusive, so the query is one
 *   second wider on both sides than the inclusive window [since, until] and callers keep the
 *   messages whose internalDate is inside it (`inGmailWindow`).
 * - Participant: `{from:a to:a}` (braces are OR), as the spec words it for Gmail ("Gmail OAuth
 *   `from:` OR `to:`"; basic IMAP is FROM OR TO OR CC, Outlook all participants). Which
 *   recipients Gmail's own `to:` covers is Gmail's matter.
 * - Folder: `labelIds` (INBOX, SENT, SPAM, TRASH or a user label id); SPAM and TRASH are only
 *   listed with `includeSpamTrash`.
 */
import { assertSearchableAddress } from '../api/search-address';

export interface GmailListQuery {
  /** Inclusive lower bound of the receipt time (whole seconds). */
  since?: Date | null;
  /** Inclusive upper bound of the receipt time (whole seconds). */
  until?: Date | null;
  /** Only messages with this bare address in From or To (Gmail's `from:` / `to:`). */
  participant?: string | null;
  /** Only messages with this label id. */
  labelId?: string | null;
}

export interface GmailListParams {
  q?: string;
  labelIds?: string[];
  includeSpamTrash: boolean;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function gmailListParams(query: GmailListQuery): GmailListParams {
  const terms: string[] = [];
  if (query.since) terms.push(`after:${seconds(query.since) - 1}`);
  if (query.until) terms.push(`before:${seconds(query.until) + 1}`);
  if (query.participant) {
    const p = query.participant.trim();
    assertSearchableAddress(p);
    terms.push(`{from:${p} to:${p}}`);
  }
  const label = query.labelId ?? null;
  return {
    ...(terms.length > 0 ? { q: terms.join(' ') } : {}),
    ...(label ? { labelIds: [label] } : {}),
    includeSpamTrash: label === 'SPAM' || label === 'TRASH',
  };
}

/** True when `internalDate` lies in the query's inclusive window (whole seconds). */
export function inGmailWindow(internalDate: Date, query: Pick<GmailListQuery, 'since' | 'until'>): boolean {
  const t = seconds(internalDate);
  if (query.since && t < seconds(query.since)) return false;
  if (query.until && t > seconds(query.until)) return false;
  return true;
}
