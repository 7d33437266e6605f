/**
 * The resume point of a job, stored as JSON in backfill_jobs.checkpoint after every batch:
 * - `lower`: the oldest point walked (window_start, or the oldest message when only `count` is set);
 * - `until`: upper bound of the slice in progress (everything newer is delivered);
 * - `folders`: per folder role, the UIDVALIDITY and the UIDs of the slice in progress already
 *   handled (posted, or skipped as the service's own sent mail). A changed UIDVALIDITY forgets
 *   them: the slice is delivered again (at-least-once), nothing is skipped;
 * - `started` / `step`: which lifecycle events were already sent.
 * On disk the UIDs are an IMAP UID set (`done: "1:250,300"`, uid-set.ts) so a checkpoint stays
 * small whatever the slice size; checkpoints of the earlier layout (`delivered: number[]`) read too.
 */
import type { FolderRole } from '../mailbox/mailbox-client';
import { parseUidSet, toUidSet } from '../mailbox/uid-set';

export interface FolderCheckpoint {
  uidValidity: string;
  delivered: Set<number>;
}

export interface JobCheckpoint {
  lower: string | null;
  until: string | null;
  folders: Partial<Record<FolderRole, FolderCheckpoint>>;
  started: boolean;
  step: number;
}

type StoredFolder = { uidValidity?: unknown; done?: unknown; delivered?: unknown };

export function readCheckpoint(raw: Record<string, unknown>): JobCheckpoint {
  const c = raw as Partial<Record<keyof JobCheckpoint, unknown>>;
  const folders: JobCheckpoint['folders'] = {};
  const stored =
    c.folders && typeof c.folders === 'object' ? (c.folders as Record<string, StoredFolder>) : {};
  for (const [role, f] of Object.entries(stored)) {
    if (!f || typeof f.uidValidity !== 'string') continue;
    const uids =
      typeof f.done === 'string'
        ? parseUidSet(f.done)
        : Array.isArray(f.delivered)
          ? f.delivered.filter((u): u is number => Number.isInteger(u))
          : [];
    folders[role as FolderRole] = { uidValidity: f.uidValidity, delivered: new Set(uids) };
  }
  return {
    lower: typeof c.lower === 'string' ? c.lower : null,
    until: typeof c.until === 'string' ? c.until : null,
    folders,
    started: c.started === true,
    step: typeof c.step === 'number' ? c.step : 0,
  };
}

/** The JSON stored for `cp` (a snapshot: later changes to `cp` do not alter it). */
export function writeCheckpoint(cp: JobCheckpoint): Record<string, unknown> {
  const folders: Record<string, { uidValidity: string; done: string }> = {};
  for (const [role, f] of Object.entries(cp.folders))
    if (f) folders[role] = { uidValidity: f.uidValidity, done: toUidSet(f.delivered) };
  return { lower: cp.lower, until: cp.until, folders, started: cp.started, step: cp.step };
}
