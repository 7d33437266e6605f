/** The OAuth client of an app's provider (client.ts interface; google.ts, microsoft.ts). */
import type { OAuthAppConfig, OAuthClient, OAuthClientOptions } from './client';
import { googleOAuthClient } from './google';
import { microsoftOAuthClient } from './microsoft';

export function oauthClientFor(app: OAuthAppConfig, opts: OAuthClientOptions): OAuthClient {
  return app.provider === 'google' ? googleOAuthClient(app, opts) : microsoftOAuthClient(app, opts);
}
