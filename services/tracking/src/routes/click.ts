/**
 * GET /c/:token: a tracked link. Records MAIL_CLICKED (details.tracking.url = the original URL)
 * and answers 302 to exactly the URL the token signs; a bad or tampered token is 404, never a
 * redirect (no open redirect). A failure to record is logged and the reader is still sent on.
 * HEAD redirects without recording: link scanners probe with it.
 */
import type { Express } from 'express';
import { recordHit } from '../record';
import { type RouteDeps, claimsOf, hitOf, hitsTotal } from './deps';

export function clickRoute(app: Express, deps: RouteDeps): void {
  app.get('/c/:token', async (req, res) => {
    const claims = claimsOf(deps, req, 'click');
    if (req.method === 'GET') {
      try {
        const recorded = await recordHit(deps, claims, 'MAIL_CLICKED', hitOf(req));
        hitsTotal.inc({ kind: 'click', outcome: recorded ? 'recorded' : 'unknown_recipient' });
      } catch (err) {
        hitsTotal.inc({ kind: 'click', outcome: 'error' });
        deps.logger.error('click could not be recorded', { err, ref_id: claims.refId });
      }
    }
    res.set('Cache-Control', 'no-store');
    // Not res.redirect(): it would re-encode the URL; the signed one goes out as it is.
    res.status(302).set('Location', headerSafeUrl(claims.url!)).end();
  });
}

/**
 * The URL as a Location value: printable ASCII stays exactly as signed; anything else (non-ASCII,
 * spaces, controls) is percent-encoded as UTF-8, as a browser would have requested it.
 */
export function headerSafeUrl(url: string): string {
  return url.replace(/[^\x21-\x7e]/gu, (c) =>
    [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}
