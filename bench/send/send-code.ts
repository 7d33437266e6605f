/**
 * The send service's per-copy modules for the in-process phases (copy, floor), loaded from
 * SERVICES_ROOT: with `BENCH_SERVICES_ROOT=<checkout>` the phases measure that checkout's code
 * (as the spawned services are), so a baseline's per-copy CPU comes from the same benchmark.
 * A checkout from before services/send/src/mime/ existed has its MIME writer in build-mime.ts.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICES_ROOT } from '../support/services';

type Mime = typeof import('@mailyard/send/src/mime');
type Dkim = typeof import('@mailyard/send/src/dkim');
type Envelopes = typeof import('@mailyard/send/src/envelopes');
type Phishing = typeof import('@mailyard/send/src/phishing');
type Render = typeof import('@mailyard/send/src/render');
type PoolCacheModule = typeof import('@mailyard/providers/src/smtp/pool-cache');
type Slices = typeof import('@mailyard/send/src/slices');
type Relay = typeof import('@mailyard/send/src/transports/relay');

/** The modules of `root`'s send service (default SERVICES_ROOT). */
export async function sendCode(root = SERVICES_ROOT) {
  const load = <T>(path: string): Promise<T> => import(join(root, 'services/send/src', path)) as Promise<T>;
  const mime = () => load<Mime>('mime/index.ts').catch(() => load<Mime>('build-mime.ts'));
  // The SMTP pools live in libs/providers; checkouts before issue 24 kept them in the send service.
  const pools = join(root, 'libs/providers/src/smtp/pool-cache.ts');
  const [mimeModule, dkim, envelopes, phishing, render, poolCache, relay, slices] = await Promise.all([
    mime(),
    load<Dkim>('dkim.ts'),
    load<Envelopes>('envelopes.ts'),
    load<Phishing>('phishing.ts'),
    load<Render>('render.ts'),
    existsSync(pools)
      ? (import(pools) as Promise<PoolCacheModule>)
      : load<PoolCacheModule>('transports/pool-cache.ts'),
    load<Relay>('transports/relay.ts'),
    load<Slices>('slices.ts'),
  ]);
  return {
    buildMessage: mimeModule.buildMessage,
    dkimSign: dkim.dkimSign,
    envelopesFor: envelopes.envelopesFor,
    checkPhishingAsync: phishing.checkPhishingAsync,
    renderCopy: render.renderCopy,
    PoolCache: poolCache.PoolCache,
    sliced: slices.sliced,
    RelayTransport: relay.RelayTransport,
  };
}
