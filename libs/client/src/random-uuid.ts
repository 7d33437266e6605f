/**
 * A random (v4) UUID for Idempotency-Keys. Node: node:crypto. Bundlers building for the browser
 * (the dashboard's esbuild, platform "browser") use random-uuid.browser.ts instead, through the
 * `browser` field of package.json: the client then has no Node built-in at all.
 */
export { randomUUID } from 'node:crypto';
