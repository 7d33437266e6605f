/**
 * The planned copy (libs/contracts planCopies: its recipients and, for tracked copies, who the
 * headers show) of one command, planned once per send rather than once per copy: with
 * substitutions a send of n recipients has n copies, and planning all of them for each copy
 * made a send cost n^2. Plans are kept per stored request object (copies of a send share it
 * through RequestCache), so they go away with it.
 */
import { type PlannedCopy, type StoredSendRequest, planCopies } from '@mailyard/contracts';

const plans = new WeakMap<StoredSendRequest, Map<string, PlannedCopy>>();

export function plannedCopy(
  request: StoredSendRequest,
  refId: string,
  copyId: string,
): PlannedCopy | undefined {
  let plan = plans.get(request);
  if (!plan) {
    plan = new Map(planCopies(request, refId).map((c) => [c.copy_id, c]));
    plans.set(request, plan);
  }
  return plan.get(copyId);
}
