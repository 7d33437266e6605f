/**
 * The plans PostgreSQL chooses for the statements a store function really sends: a Queryable that,
 * before each statement whose text matches `on`, records its plan (EXPLAIN, same parameters) as
 * a flat list of nodes, then runs it. For tests asserting that a statement reads a table through
 * an index (libs/store/test/email-row-costs.test.ts, inbound-message-plans.test.ts).
 */
import type { Queryable } from '@mailyard/platform';

export type PlanNode = {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
};

/** A plan tree as the list of its nodes, root first. */
export const planNodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(planNodes)];

export function explaining(q: Queryable, on: RegExp, plans: PlanNode[][]): Queryable {
  return {
    async query(sql, params) {
      if (on.test(sql)) {
        const { rows } = await q.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
          `EXPLAIN (FORMAT JSON) ${sql}`,
          params,
        );
        plans.push(planNodes(rows[0]!['QUERY PLAN'][0]!.Plan));
      }
      return q.query(sql, params);
    },
  } as Queryable;
}
