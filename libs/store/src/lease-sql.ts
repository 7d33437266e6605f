/**
 * The one way a table row is leased (backfill_jobs.lease_until, webhook_deliveries.leased_until):
 * a claim sets the lease's end to now plus a duration given in milliseconds, and a row is free
 * again once that end has passed or it was cleared (released, or an outcome was recorded). A
 * holder that dies simply lets its lease run out. In code, a held row lease is a platform Lease
 * (libs/platform/src/lease/lease.ts, e.g. backfillJobs.lease) and is renewed by its one loop.
 */

/** SQL for the end of a lease of `msParam` milliseconds (a query parameter such as `$2`) from now. */
export function leaseEndSql(msParam: string): string {
  return `now() + make_interval(secs => ${msParam}::double precision / 1000)`;
}

/** SQL that holds when the lease kept in `column` is free: never taken, released, or run out. */
export function leaseFreeSql(column: string): string {
  return `(${column} IS NULL OR ${column} <= now())`;
}
