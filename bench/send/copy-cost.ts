/**
 * The send service's own work for one copy, measured in this process with the service's code
 * (BENCH_SERVICES_ROOT's when set, send-code.ts; no bus, no database, no SMTP): render, phishing
 * check, MIME build, DKIM signature; and an RSA-2048 signature alone, the floor of a DKIM-signed email. CPU time (process.cpuUsage), so it
 * is steadier than the end-to-end figures on a shared machine: it tells how much of the send
 * service's CPU per email is this work and how much is the pipeline around it.
 */
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { SendRequestSchema, type StoredSendRequest, substitutionsFor } from '@mailyard/contracts';
import type { DkimKeyPair } from '@mailyard/testkit/fixtures';
import { sendCode } from './send-code';

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export async function copyCost(
  body: (i: number) => string,
  key: DkimKeyPair,
  domain: string,
  n = 1000,
  root?: string,
) {
  const { buildMessage, checkPhishingAsync, dkimSign, renderCopy } = await sendCode(root);
  const requests = Array.from({ length: 200 }, (_, i) => {
    const r = SendRequestSchema.parse(JSON.parse(body(i)));
    return r as StoredSendRequest;
  });
  const dkim = { domainName: domain, keySelector: 'mailyard', privateKeyPem: key.privateKeyPem };
  const totals = { render: 0, phishing: 0, build: 0, dkim: 0 };
  const one = async (i: number, measure: boolean) => {
    const request = requests[i % requests.length]!;
    const to = request.to[0]!;
    let t = cpuMs();
    const rendered = renderCopy(request, substitutionsFor(request, to.email));
    let u = cpuMs();
    if (measure) totals.render += u - t;
    t = u;
    await checkPhishingAsync(rendered, { blocklist: [], budgetMs: 2_000, maxLinks: 10_000 });
    u = cpuMs();
    if (measure) totals.phishing += u - t;
    t = u;
    const built = await buildMessage({
      request,
      recipients: [{ email: to.email, ...(to.name ? { name: to.name } : {}), type: 'to' }],
      rendered,
      copyId: `01JBENCH.${i}`,
      serviceDomain: 'mailyard.bench',
    });
    u = cpuMs();
    if (measure) totals.build += u - t;
    t = u;
    await dkimSign(built.raw, dkim);
    if (measure) totals.dkim += cpuMs() - t;
  };
  for (let i = 0; i < 200; i++) await one(i, false); // warm-up (JIT)
  for (let i = 0; i < n; i++) await one(i, true);
  const privateKey = createPrivateKey(key.privateKeyPem);
  const digest = createHash('sha256').update('x').digest();
  let t = cpuMs();
  for (let i = 0; i < n; i++) sign('sha256', digest, privateKey);
  const rsa = (cpuMs() - t) / n;
  const per = (v: number) => Number((v / n).toFixed(3));
  t = Object.values(totals).reduce((a, b) => a + b, 0);
  return {
    note: 'CPU ms per copy in one process: the per-email work of the send service without bus, database and SMTP',
    copies: n,
    render_ms: per(totals.render),
    phishing_check_ms: per(totals.phishing),
    mime_build_ms: per(totals.build),
    dkim_sign_ms: per(totals.dkim),
    total_ms: per(t),
    rsa2048_signature_alone_ms: Number(rsa.toFixed(3)),
  };
}
