import type { Server } from 'node:http';
import {
  type Config,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import { type Env, type Mode, type SharedStores, createSharedStores } from '@mailyard/testkit/stores';
import type { Express } from 'express';
import request, { type Test } from 'supertest';
import { buildGatewayApp } from '../../src/app';
import { type GatewayConfig, gatewayConfig } from '../../src/settings';

export type { Env, Mode, SharedStores };
/** The gateway tests' name for createSharedStores (fresh stores per file, both modes). */
export const createStores = createSharedStores;

export interface TestTenant {
  tenantId: string;
  apiKey: string;
  keyId: string;
}

export interface TestGateway {
  ctx: ServiceContext;
  app: Express;
  config: GatewayConfig;
  /** Creates a tenant and returns its API key. */
  newTenant(tier?: 'standard' | 'enterprise'): Promise<TestTenant>;
  close(): Promise<void>;
}

/** A gateway app over the given stores (several instances may share one set, like replicas). */
export async function startGateway(stores: SharedStores, env: Env = {}): Promise<TestGateway> {
  // Test peers (SMTP, Dovecot) listen on 127.0.0.1: private hosts are allowed unless a test says otherwise.
  const config = gatewayConfig(
    configFrom({
      LOG_LEVEL: 'error',
      API_KEY_CACHE_MS: '0',
      MAILER_ALLOW_PRIVATE_HOSTS: '1',
      ...stores.env,
      ...env,
    }),
  );
  const logger = createLogger('gateway-test', process.env.TEST_LOG_LEVEL ?? 'error');
  const ctx = await openContext(config, logger);
  return {
    ctx,
    config,
    app: buildGatewayApp(ctx),
    async newTenant(tier = 'standard') {
      const t = await createTenant(ctx.db, {
        name: `tenant-${Math.random().toString(36).slice(2, 8)}`,
        tier,
      });
      return { tenantId: t.id, apiKey: t.apiKey, keyId: t.keyId };
    },
    close: () => closeContext(ctx),
  };
}

/** The gateway of one suite (see useGateway), with the suite's tenant and a second one for tenancy checks. */
export interface SuiteGateway extends Omit<TestGateway, 'close'> {
  readonly stores: SharedStores;
  /** API key and id of the suite's tenant. */
  readonly key: string;
  readonly tenantId: string;
  /** API key and id of another tenant, whose data the suite's tenant must not see. */
  readonly otherKey: string;
  readonly otherTenantId: string;
  /** Requests as the suite's tenant, or as the tenant of `apiKey`; a given `body` is sent. */
  get(path: string, apiKey?: string): Test;
  delete(path: string, apiKey?: string): Test;
  post(path: string, body?: string | object, apiKey?: string): Test;
  put(path: string, body?: string | object, apiKey?: string): Test;
}

/**
 * Registers the suite's beforeAll/afterAll: fresh stores (createStores), a gateway over them
 * (startGateway) and two tenants. Read the result inside hooks and tests; `beforeClose` runs
 * before the gateway closes (to stop what the suite started on its context).
 */
export function useGateway(mode: Mode, env: Env = {}, beforeClose?: () => Promise<void>): SuiteGateway {
  let stores: SharedStores | undefined;
  let gw: TestGateway | undefined;
  let tenants: { own: TestTenant; other: TestTenant } | undefined;
  beforeAll(async () => {
    stores = await createStores(mode);
    gw = await startGateway(stores, env);
    tenants = { own: await gw.newTenant(), other: await gw.newTenant() };
  });
  afterAll(async () => {
    await beforeClose?.();
    await gw?.close();
    await stores?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useGateway: read the gateway inside hooks and tests');
    return value;
  };
  const call = (
    method: 'get' | 'delete' | 'post' | 'put',
    path: string,
    body?: string | object,
    apiKey = ready(tenants).own.apiKey,
  ): Test => {
    const req = request(ready(gw).app)[method](path).set(bearer(apiKey));
    return body === undefined ? req : req.send(body);
  };
  return {
    get stores() {
      return ready(stores);
    },
    get ctx() {
      return ready(gw).ctx;
    },
    get app() {
      return ready(gw).app;
    },
    get config() {
      return ready(gw).config;
    },
    newTenant: (tier) => ready(gw).newTenant(tier),
    get key() {
      return ready(tenants).own.apiKey;
    },
    get tenantId() {
      return ready(tenants).own.tenantId;
    },
    get otherKey() {
      return ready(tenants).other.apiKey;
    },
    get otherTenantId() {
      return ready(tenants).other.tenantId;
    },
    get: (path, apiKey) => call('get', path, undefined, apiKey),
    delete: (path, apiKey) => call('delete', path, undefined, apiKey),
    post: (path, body, apiKey) => call('post', path, body, apiKey),
    put: (path, body, apiKey) => call('put', path, body, apiKey),
  };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

export type { Server };
