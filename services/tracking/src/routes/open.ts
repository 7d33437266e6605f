/**
 * GET /o/:token: the open pixel. Answers a 1x1 transparent GIF that must not be cached (each
 * load is an open) and records MAIL_OPENED for the recipient the token names. A bad token is
 * 404. A failure to record is logged and still answers the pixel: the reader's mail client is
 * not the place to report it. HEAD answers the pixel without recording (prefetch checks).
 */
import type { Express } from 'express';
import { recordHit } from '../record';
import { type RouteDeps, claimsOf, hitOf, hitsTotal } from './deps';

export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

export function openRoute(app: Express, deps: RouteDeps): void {
  app.get('/o/:token', async (req, res) => {
    const claims = claimsOf(deps, req, 'open');
    if (req.method === 'GET') {
      try {
        const recorded = await recordHit(deps, claims, 'MAIL_OPENED', hitOf(req));
        hitsTotal.inc({ kind: 'open', outcome: recorded ? 'recorded' : 'unknown_recipient' });
      } catch (err) {
        hitsTotal.inc({ kind: 'open', outcome: 'error' });
        deps.logger.error('open could not be recorded', { err, ref_id: claims.refId });
      }
    }
    res.set({
      'Content-Type': 'image/gif',
      'Cache-Control': 'no-store, no-cache, must-revalidate, max-age=0',
      Pragma: 'no-cache',
      Expires: '0',
    });
    res.status(200).end(PIXEL_GIF);
  });
}
