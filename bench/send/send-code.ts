/**
 * The send service's per-copy modules for the in-process phases (copy, floor), loaded from
 * SERVICES_ROOT: with `BENCH_SERVICES_ROOT=<checkout>` the phases measure that checkout's code
 * (as the spawned services are), so a baseline's per-copy CPU comes from the same benchmark.
 * A checkout from before services/send/src/mime/ existed has its MIME writer in build-mime.ts.
 */
import { join } from 'node:path';
import { SERVICES_ROOT } from '../support/services';

type Mime = typeof import('../../services/send/src/mime');
type Dkim = typeof import('../../services/send/src/dkim');
type Envelopes = typeof import('../../services/send/src/envelopes');
type Phishing = typeof import('../../services/send/src/phishing');
type Render = typeof import('../../services/send/src/render');
type PoolCacheModule = typeof import('../../services/send/src/transports/pool-cache');
type Relay = typeof import('../../services/send/src/transports/relay');

/** The modules of `root`'s send service (default SERVICES_ROOT). */
export async function sendCode(root = SERVICES_ROOT) {
  const load = <T>(path: string): Promise<T> => import(join(root, 'services/send/src', path)) as Promise<T>;
  const mime = () => load<Mime>('mime/index.ts').catch(() => load<Mime>('build-mime.ts'));
  const [mimeModule, dkim, envelopes, phishing, render, poolCache, relay] = await Promise.all([
    mime(),
    load<Dkim>('dkim.ts'),
    load<Envelopes>('envelopes.ts'),
    load<Phishing>('phishing.ts'),
    load<Render>('render.ts'),
    load<PoolCacheModule>('transports/pool-cache.ts'),
    load<Relay>('transports/relay.ts'),
  ]);
  return {
    buildMessage: mimeModule.buildMessage,
    dkimSign: dkim.dkimSign,
    envelopesFor: envelopes.envelopesFor,
    checkPhishingAsync: phishing.checkPhishingAsync,
    renderCopy: render.renderCopy,
    PoolCache: poolCache.PoolCache,
    RelayTransport: relay.RelayTransport,
  };
}
