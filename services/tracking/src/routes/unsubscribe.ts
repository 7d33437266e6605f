/**
 * Unsubscribe (RFC 8058 and a confirmation page):
 * - POST /u/:token: the one-click unsubscribe mail providers send for `List-Unsubscribe-Post:
 *   List-Unsubscribe=One-Click` (and the confirmation page's form). Adds the address to the
 *   tenant's suppression list (reason `unsubscribe`, ref_id the send the link came in) and
 *   records MAIL_UNSUBSCRIBED, in one transaction (libs/store suppressions.ts `unsubscribeIn`,
 *   the one rule of unsubscribes); answers 200
 *   with a short page. Repeating it is harmless: only the POST that newly suppressed the
 *   address records the event.
 * - GET /u/:token: a confirmation page with a POST form. A GET never unsubscribes: link
 *   scanners and prefetchers follow GETs.
 * A bad token is 404. A failure to suppress is a 500 (the address was not unsubscribed).
 */
import { SuppressionReason, unsubscribeIn } from '@mailyard/store';
import type { Express } from 'express';
import { recordHitIn } from '../record';
import { type RouteDeps, claimsOf, hitOf, hitsTotal } from './deps';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${title}</title></head><body style="font-family:sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem">${body}</body></html>`;
}

export function unsubscribeRoute(app: Express, deps: RouteDeps): void {
  app.get('/u/:token', (req, res) => {
    const claims = claimsOf(deps, req, 'unsubscribe');
    res.set({ 'Cache-Control': 'no-store', 'Content-Type': 'text/html; charset=utf-8' });
    res.send(
      page(
        'Unsubscribe',
        `<h1>Unsubscribe</h1><p>Stop receiving these emails at <strong>${escapeHtml(claims.email)}</strong>?</p>` +
          `<form method="post" action=""><input type="hidden" name="List-Unsubscribe" value="One-Click">` +
          '<button type="submit">Unsubscribe</button></form>',
      ),
    );
  });

  app.post('/u/:token', async (req, res) => {
    const claims = claimsOf(deps, req, 'unsubscribe');
    const hit = hitOf(req);
    const recorded = await deps.db.transaction(
      async (tx) =>
        (await unsubscribeIn(
          tx,
          claims.tenantId,
          claims.email,
          () => recordHitIn(tx, deps, claims, 'MAIL_UNSUBSCRIBED', hit),
          SuppressionReason.unsubscribed,
          claims.refId,
        )) ?? false,
    );
    if (recorded) deps.afterCommit();
    hitsTotal.inc({ kind: 'unsubscribe', outcome: recorded ? 'recorded' : 'already' });
    res.set({ 'Cache-Control': 'no-store', 'Content-Type': 'text/html; charset=utf-8' });
    res.send(
      page(
        'Unsubscribed',
        `<h1>Unsubscribed</h1><p><strong>${escapeHtml(claims.email)}</strong> will no longer receive these emails.</p>`,
      ),
    );
  });
}
