/**
 * The resume point of a job, stored as JSON in backfill_jobs.checkpoint after every batch:
 * - `lower`: the oldest point walked (window_start, or the oldest message when only `count` is set);
 * - `until`: upper bound of the slice in progress (everything newer is delivered);
 * - `folders`: per folder role, the UIDVALIDITY and the UIDs of the slice in progress already
 *   delivered (a changed UIDVALIDITY forgets them: the slice is delivered again, at-least-once);
 * - `started` / `step`: which lifecycle events were already sent.
 */
import type { FolderRole } from '../mailbox/mailbox-client';

export interface JobCheckpoint {
  lower: string | null;
  until: string | null;
  folders: Partial<Record<FolderRole, { uidValidity: string; delivered: number[] }>>;
  started: boolean;
  step: number;
}

export function readCheckpoint(raw: Record<string, unknown>): JobCheckpoint {
  const c = raw as Partial<JobCheckpoint>;
  return {
    lower: typeof c.lower === 'string' ? c.lower : null,
    until: typeof c.until === 'string' ? c.until : null,
    folders: c.folders && typeof c.folders === 'object' ? c.folders : {},
    started: c.started === true,
    step: typeof c.step === 'number' ? c.step : 0,
  };
}
