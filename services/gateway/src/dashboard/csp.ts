/**
 * The Content-Security-Policy of the dashboard (/ui) and the API reference (/docs): scripts,
 * styles and connections from this origin only; no inline script, no eval, nothing from another
 * host. `img-src data:` is for the small SVG icons inlined in Swagger UI's stylesheet; `style-src`
 * has no 'unsafe-inline' (uPlot, Preact and Swagger UI set styles through the CSSOM, which CSP
 * allows). docs/dashboard.md "Security".
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every dashboard and /docs answer carries. */
export const DASHBOARD_HEADERS: Record<string, string> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};
