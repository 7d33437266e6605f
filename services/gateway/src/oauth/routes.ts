/**
 * OAuth apps, login, callback and activation over HTTP (docs/api/oauth.md, docs/oauth.md). Routes parse
 * and shape answers; oauth-flow.ts, oauth-apps.ts, activate.ts do the work. The callback is the
 * one /v1 route without an API key (app.ts lets it through): the user's browser arrives from the
 * provider and the signed state names the tenant.
 */
import {
  CreateOAuthAppSchema,
  type ListOAuthAppsResponse,
  OAuthActivateSchema,
  type OAuthAppCreatedResponse,
  OAuthCallbackQuerySchema,
  type OAuthConnectedResponse,
  OAuthErrorText,
  OAuthLoginSchema,
  type OAuthLoginUrlResponse,
} from '@mailyard/contracts';
import { badRequest, parseOrThrow } from '@mailyard/platform';
import { StateSigner, oauthClientFor, providerEndpoints, providerSettings } from '@mailyard/providers';
import { oauthGrantStore } from '@mailyard/store';
import { type Response, Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import type { GatewayContext } from '../settings';
import { activateOAuthMailer } from './activate';
import type { Connected } from './connect-mailer';
import { createApp, deleteApp, listApps } from './oauth-apps';
import { type OAuthFlowDeps, callback, login } from './oauth-flow';
import { PendingLogins } from './pending-logins';

/** 201 for a new mailer, 200 for a re-authenticated one. */
function sendConnected(res: Response, out: Connected): void {
  res
    .status(out.created ? 201 : 200)
    .json({ success: true, mailer_id: out.mailerId, message: out.message } satisfies OAuthConnectedResponse);
}

/** The /v1 routes served without an API key. */
export const PUBLIC_V1_ROUTES = [{ method: 'GET', path: '/v1/oauth/callback' }] as const;

export function oauthRoutes(ctx: Pick<GatewayContext, 'db' | 'kv' | 'sealer' | 'logger' | 'config'>): Router {
  const { db, sealer } = ctx;
  const settings = providerSettings(ctx.config);
  const clientOptions = { endpoints: providerEndpoints(settings), timeoutMs: settings.OAUTH_HTTP_TIMEOUT_MS };
  const deps: OAuthFlowDeps = {
    db,
    sealer,
    apps: oauthGrantStore(db, sealer),
    logger: ctx.logger,
    settings,
    signer: new StateSigner(sealer.deriveKey('mailyard oauth state')),
    pending: new PendingLogins(ctx.kv, sealer, settings.OAUTH_STATE_TTL_S * 1000 + 60_000),
    clientFor: (app) => oauthClientFor(app, clientOptions),
  };
  const router = Router();

  router.post('/v1/oauth/apps', async (req, res) => {
    const input = parseOrThrow(CreateOAuthAppSchema, req.body);
    const appId = await createApp(deps, tenantOf(res).tenantId, input);
    res.status(201).json({ success: true, app_id: appId } satisfies OAuthAppCreatedResponse);
  });

  router.get('/v1/oauth/apps', async (_req, res) => {
    const data = await listApps(db, settings, tenantOf(res).tenantId);
    res.json({ success: true, data } satisfies ListOAuthAppsResponse);
  });

  router.delete('/v1/oauth/apps/:app_id', async (req, res) => {
    await deleteApp(db, tenantOf(res).tenantId, req.params.app_id ?? '');
    res.json({ success: true, message: 'OAuth app deleted' });
  });

  router.post('/v1/oauth/login', async (req, res) => {
    const input = parseOrThrow(OAuthLoginSchema, req.body);
    const out = await login(deps, tenantOf(res).tenantId, input);
    if ('url' in out) {
      res.json({ success: true, url: out.url } satisfies OAuthLoginUrlResponse);
      return;
    }
    sendConnected(res, out);
  });

  router.get('/v1/oauth/callback', async (req, res) => {
    const query = parseOrThrow(OAuthCallbackQuerySchema, req.query);
    sendConnected(res, await callback(deps, query));
  });

  router.post('/v1/oauth/activate', async (req, res) => {
    const input = parseOrThrow(OAuthActivateSchema, req.body);
    const r = await activateOAuthMailer(db, tenantOf(res).tenantId, input.mailer_id, input.active);
    res.json({ success: true, mailer_id: input.mailer_id, state: r.state, message: r.message });
  });

  router.all('/v1/oauth/apps', (req, _res, next) => {
    if (req.method === 'DELETE') throw badRequest(OAuthErrorText.appIdRequired);
    next();
  });

  return router;
}
