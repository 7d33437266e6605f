/**
 * The provider SDKs (and imapflow), loaded on first use rather than at import: googleapis' Gmail API,
 * google-auth-library and @azure/msal-node add about 17 MB to the resident memory of a process
 * that has them evaluated, and most deployments (and every process with no OAuth mailer) never
 * call them. Each loader evaluates its module once and shares the promise. In the esbuild
 * bundle (deploy/build-dist.mjs, CommonJS) a dynamic import of a bundled package is evaluated
 * when it is first awaited, so the saving holds there too (bench/history/06-2026-11-26-footprint.md).
 *
 * Only values go through here; types are imported with `import type` where they are used.
 */
let gmailApi: Promise<typeof import('googleapis/build/src/apis/gmail')> | undefined;
let googleAuth: Promise<typeof import('google-auth-library')> | undefined;
let msal: Promise<typeof import('@azure/msal-node')> | undefined;
let imapflow: Promise<typeof import('imapflow')> | undefined;

/** googleapis' Gmail v1 client factory (`gmail({ version: 'v1', ... })`). */
export const loadGmailApi = () => {
  gmailApi ??= import('googleapis/build/src/apis/gmail');
  return gmailApi;
};

/** google-auth-library (OAuth2Client). */
export const loadGoogleAuth = () => {
  googleAuth ??= import('google-auth-library');
  return googleAuth;
};

/** @azure/msal-node (ConfidentialClientApplication, LogLevel). */
export const loadMsal = () => {
  msal ??= import('@azure/msal-node');
  return msal;
};

/** imapflow (ImapFlow), for connections to tenants' IMAP servers (imap/connection.ts). */
export const loadImapFlow = () => {
  imapflow ??= import('imapflow');
  return imapflow;
};
