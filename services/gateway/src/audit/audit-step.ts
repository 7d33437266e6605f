/**
 * The audit step: the one place changes through the /v1 API are recorded (docs/api/audit.md).
 * Mounted in express's chain after the key check and before the routes, it wraps `res.json` of
 * each change request (any method but GET/HEAD/OPTIONS); when the route answers 2xx and its
 * `METHOD /route/path` has a rule (audit-table.ts), the entry `{key_id, action, resource,
 * resource_id, ip}` is inserted first and the answer sent after the insert returned, so a client
 * that saw the answer can find the entry. Not in the route's transaction: a change that committed
 * and whose entry then fails to insert (database gone in between) is still answered as it
 * happened (it cannot be undone), and the failure is logged at error level with the entry.
 * The client address is express's req.ip (the gateway's TRUST_PROXY setting).
 */
import type { Db, Logger } from '@mailyard/platform';
import { type KeyOwner, auditLog } from '@mailyard/store';
import type { NextFunction, Request, Response } from 'express';
import { READ_METHODS, auditRuleOf } from './audit-table';

export function auditStep(db: Db, logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (READ_METHODS.has(req.method)) {
      next();
      return;
    }
    const json = res.json.bind(res);
    res.json = (answer: unknown) => {
      const owner = res.locals.owner as KeyOwner | undefined;
      const rule = req.route ? auditRuleOf(req.method, `${req.baseUrl}${req.route.path}`) : undefined;
      if (!owner || !rule || res.statusCode < 200 || res.statusCode > 299) return json(answer);
      const source = { params: req.params, request: req.body, answer };
      const resourceId = rule.id(source);
      if (rule.onlyWithId && resourceId === null) return json(answer);
      const entry = {
        tenantId: owner.tenantId,
        keyId: owner.keyId,
        action: typeof rule.action === 'function' ? rule.action(source) : rule.action,
        resource: rule.resource,
        resourceId,
        ip: req.ip ?? null,
      };
      void (async () => {
        try {
          await auditLog.record(db, entry);
        } catch (err) {
          logger.error('audit entry not recorded', { ...entry, error: (err as Error).message });
        }
        try {
          json(answer);
        } catch (err) {
          logger.error('answer not sent after the audit entry', { error: (err as Error).message });
        }
      })();
      return res;
    };
    next();
  };
}
