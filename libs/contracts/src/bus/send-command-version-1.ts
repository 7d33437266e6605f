/**
 * The previous release's `send.email` version 1, read for one release only: REMOVE THIS FILE IN
 * THE NEXT RELEASE (with the `version === 1` case of decodeSendEmailMessage), docs/deploy.md
 * "A new `send.email` message version".
 *
 * Version 1 named the copies of ONE send, `{ref_id, tenant_id, copy_id, attempt}` (one copy:
 * every retry) or `{ref_id, tenant_id, copy_ids, attempt}` (several). The previous release's
 * processes wrote it until they stopped, so its messages can still wait in `send.commands`
 * (delayed retries) or in the outbox while this release starts. Each is read as the version-2
 * message it stands for: a group of one send, in the envelope's trace (no item traceparent).
 */
export function upgradeVersion1SendEmail(payload: unknown): unknown {
  if (typeof payload !== 'object' || payload === null) return payload;
  const { ref_id, tenant_id, copy_id, copy_ids, attempt } = payload as Record<string, unknown>;
  // A payload naming a copy list is read as that list, never as its one copy_id.
  const copies = copy_ids !== undefined ? copy_ids : copy_id === undefined ? undefined : [copy_id];
  return { sends: [{ tenant_id, ref_id, copy_ids: copies }], attempt };
}
