/**
 * k8s/ (issue 13): both overlays render with `kubectl kustomize`, every object validates against
 * the official schemas shipped by `kubernetes-models` (offline), and the invariants hold: every
 * service has a Deployment with probes, resources, a non-root read-only security context and
 * topology spread; every pod an ops port (the process's default, services/<name>/src/main.ts)
 * with the probes and the Prometheus scrape annotations on it, open only to the monitoring
 * namespace and on no public Service; gateway, send and dispatcher have an HPA; every Deployment
 * a PDB; inbound-smtp is a LoadBalancer on 25 (its SMTP port open in the NetworkPolicies);
 * every env var the code reads (the platform's and every service's settings schema) is provided
 * (ConfigMap or Secret) and documented in .env.example; docker-compose.yml runs every service with
 * a healthcheck; images are pinned; no secret values in ConfigMaps.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { parse, parseAllDocuments } from 'yaml';
import { EnvSchema } from '../libs/platform/src/config/env';
import { GatewayEnvSchema } from '../services/gateway/src/settings';
import { BackfillEnvSchema } from '../services/imap-backfill/src/settings';
import { InboundEnvSchema } from '../services/inbound-smtp/src/settings';
import { SendEnvSchema } from '../services/send/src/settings';
import { TrackingEnvSchema } from '../services/tracking/src/settings';
import { DispatcherEnvSchema } from '../services/webhook-dispatcher/src/settings';

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are untyped
type Obj = any;

function render(overlay: string): Obj[] {
  const yaml = execFileSync('kubectl', ['kustomize', join(REPO_ROOT, 'k8s', 'overlays', overlay)], {
    encoding: 'utf8',
  });
  const objs: Obj[] = parseAllDocuments(yaml).map((d) => d.toJS());
  // kustomize folds long base64 values over lines; the API server's decoder skips the newlines.
  for (const o of objs)
    if (o.kind === 'Secret')
      for (const k of Object.keys(o.data ?? {})) o.data[k] = String(o.data[k]).replace(/\s+/g, '');
  return objs;
}

function validate(o: Obj): void {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : [undefined, o.apiVersion];
  const mod = require(`kubernetes-models/${group ? `${group}/` : ''}${version}/${o.kind}`);
  const Model = mod[o.kind] ?? mod.default;
  new Model(o).validate();
}

/** A settings schema's fields, also when it is refined (`.superRefine` wraps it in ZodEffects). */
type Schema = { shape: Record<string, unknown> } | { innerType(): Schema };
function shapeOf(s: Schema): Record<string, unknown> {
  return 'innerType' in s ? shapeOf(s.innerType()) : s.shape;
}

/** Every variable the code reads: the platform schema, each service's own, and the logger's switch. */
const CODE_ENV = [
  ...new Set(
    [
      EnvSchema,
      GatewayEnvSchema,
      SendEnvSchema,
      TrackingEnvSchema,
      DispatcherEnvSchema,
      InboundEnvSchema,
      BackfillEnvSchema,
    ].flatMap((s) => Object.keys(shapeOf(s))),
  ),
  'LOG_SILENT',
];
const SECRET_NAMES = /(_URL$|_KEY$|SECRET|PASSWORD|TOKEN)/;
/** Secret-looking names whose value is not a secret: a public URL, a path to a mounted key file. */
const NOT_SECRET: Record<string, RegExp> = {
  TRACKING_BASE_URL: /^https?:\/\/[^@]*$/,
  INBOUND_TLS_KEY: /^$|^\/etc\/mailyard\/inbound-tls\/[\w.-]+$/,
  // Provider endpoints (empty = the public ones): addresses, never with credentials in them.
  GOOGLE_OAUTH_URL: /^$|^https:\/\/[^@]*$/,
  GMAIL_API_URL: /^$|^https:\/\/[^@]*$/,
  SPARKPOST_API_URL: /^$|^https:\/\/[^@]*$/,
  MICROSOFT_LOGIN_URL: /^$|^https:\/\/[^@]*$/,
  MICROSOFT_GRAPH_URL: /^$|^https:\/\/[^@]*$/,
};
/** The services: a Deployment each in k8s, a service each in docker-compose.yml. */
const SERVICES = ['gateway', 'imap-backfill', 'inbound-smtp', 'send', 'tracking', 'webhook-dispatcher'];

/** The ops port a service's process binds when OPS_PORT is unset (its main.ts `opsPort`). */
function defaultOpsPort(service: string): number {
  const main = readFileSync(join(REPO_ROOT, 'services', service, 'src', 'main.ts'), 'utf8');
  return Number(/^\s*opsPort: (\d+),$/m.exec(main)?.[1]);
}

describe.each(['dev', 'production'])('k8s overlay %s', (overlay) => {
  let objs: Obj[];
  beforeAll(() => {
    objs = render(overlay);
  });
  const all = (kind: string) => objs.filter((o) => o.kind === kind);

  it('renders and every object validates against the Kubernetes schemas', () => {
    expect(objs.length).toBeGreaterThan(15);
    for (const o of objs) expect(() => validate(o)).not.toThrow();
  });

  it('every Deployment has probes, resources, non-root read-only security and topology spread', () => {
    const deps = all('Deployment');
    expect(deps.map((d) => d.metadata.name).sort()).toEqual(SERVICES);
    for (const d of deps) {
      const spec = d.spec.template.spec;
      expect(spec.securityContext.runAsNonRoot).toBe(true);
      expect(spec.topologySpreadConstraints.length).toBeGreaterThan(0);
      for (const c of spec.containers) {
        expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'ops' });
        expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'ops' });
        expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'ops' });
        expect(c.resources.requests.cpu && c.resources.requests.memory).toBeTruthy();
        expect(c.resources.limits.memory).toBeTruthy();
        expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
        expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
        expect(c.envFrom.map((e: Obj) => e.configMapRef?.name ?? e.secretRef?.name).length).toBe(2);
        expect(c.args).toEqual([`dist/bin/${d.metadata.name}.js`]);
      }
    }
  });

  it('every pod has an ops port (its process default) that Prometheus scrapes, open only to the monitoring namespace, on no public Service', () => {
    for (const d of all('Deployment')) {
      const name = d.metadata.name;
      const ops = d.spec.template.spec.containers[0].ports.find((p: Obj) => p.name === 'ops');
      expect({ name, port: ops?.containerPort }).toEqual({ name, port: defaultOpsPort(name) });
      expect(d.spec.template.metadata.annotations).toEqual({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(ops.containerPort),
        'prometheus.io/path': '/metrics',
      });
    }
    const policies = all('NetworkPolicy');
    const opsPolicies = policies.filter((n) =>
      (n.spec.ingress ?? []).some((i: Obj) => (i.ports ?? []).some((p: Obj) => p.port === 'ops')),
    );
    expect(opsPolicies).toHaveLength(1);
    expect(opsPolicies[0].spec.podSelector).toEqual({
      matchLabels: { 'app.kubernetes.io/part-of': 'mailyard' },
    });
    expect(opsPolicies[0].spec.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ port: 'ops', protocol: 'TCP' }],
      },
    ]);
    // Ingress from anywhere (no `from`) names public ports only.
    const opsNumbers = new Set(SERVICES.map(defaultOpsPort));
    for (const n of policies)
      for (const i of n.spec.ingress ?? [])
        if (!i.from)
          for (const p of i.ports ?? []) expect(p.port === 'ops' || opsNumbers.has(p.port)).toBe(false);
    // The public Services carry their public port only.
    for (const name of ['gateway', 'tracking', 'inbound-smtp']) {
      const svc = all('Service').find((s) => s.metadata.name === name);
      expect(svc.spec.ports.map((p: Obj) => p.targetPort)).toEqual([
        name === 'inbound-smtp' ? 'smtp' : 'http',
      ]);
    }
  });

  it('HPAs for gateway, send, dispatcher; a PDB per Deployment; migration Job; inbound LoadBalancer on 25; NetworkPolicies', () => {
    expect(
      all('HorizontalPodAutoscaler')
        .map((h) => h.spec.scaleTargetRef.name)
        .sort(),
    ).toEqual(['gateway', 'send', 'webhook-dispatcher']);
    expect(all('PodDisruptionBudget').length).toBe(all('Deployment').length);
    expect(all('Job').map((j) => j.spec.template.spec.containers[0].args)).toEqual([['dist/bin/migrate.js']]);
    expect(all('Service').filter((s) => s.spec.type === 'LoadBalancer')).toHaveLength(1);
    const inbound = all('Service').find((s) => s.metadata.name === 'inbound-smtp');
    expect(inbound.spec).toMatchObject({ type: 'LoadBalancer', externalTrafficPolicy: 'Local' });
    expect(inbound.spec.ports).toEqual([{ name: 'smtp', port: 25, targetPort: 'smtp', protocol: 'TCP' }]);
    const pod = all('Deployment').find((d) => d.metadata.name === 'inbound-smtp').spec.template.spec;
    expect(pod.containers[0].ports.find((p: Obj) => p.name === 'smtp').containerPort).toBe(2525);
    const policies = all('NetworkPolicy');
    expect(policies.some((n) => n.spec.podSelector && Object.keys(n.spec.podSelector).length === 0)).toBe(
      true,
    );
    // Whoever may reach the MX pods from anywhere, on SMTP only.
    const smtpOpen = policies.find(
      (n) => n.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] === 'inbound-smtp',
    );
    expect(smtpOpen.spec.ingress).toEqual([{ ports: [{ port: 2525, protocol: 'TCP' }] }]);
  });

  it('every env var the code reads is provided, none with a secret in the ConfigMap; all documented in .env.example', () => {
    const cm = all('ConfigMap').find((c) => c.metadata.name.startsWith('mailyard-config'));
    const secret = all('Secret').find((s) => s.metadata.name.startsWith('mailyard-secrets'));
    const provided = new Set([...Object.keys(cm.data), ...Object.keys(secret.data)]);
    expect(CODE_ENV.filter((k) => !provided.has(k))).toEqual([]);
    expect(
      Object.keys(cm.data).filter((k) => SECRET_NAMES.test(k) && !NOT_SECRET[k]?.test(cm.data[k])),
    ).toEqual([]);
    const example = readFileSync(join(REPO_ROOT, '.env.example'), 'utf8');
    const compose = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
    const undocumented = CODE_ENV.filter(
      (k) => !new RegExp(`^#? ?${k}=`, 'm').test(example) && !compose.includes(`${k}:`),
    );
    expect(undocumented).toEqual([]);
  });

  it('docker-compose.yml runs every service from the one image, with a /healthz + /readyz healthcheck on its ops port', () => {
    const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
    for (const name of SERVICES) {
      const svc = compose.services[name];
      expect(svc.command).toEqual([`dist/bin/${name}.js`]);
      const [cmd, node, flag, script, port] = svc.healthcheck.test;
      expect([cmd, node, flag]).toEqual(['CMD', 'node', '-e']);
      expect(script).toContain("['healthz','readyz']");
      expect(script).not.toMatch(/\s/); // podman splits CMD arguments at spaces
      const k8sPort = objs
        .find((o) => o.kind === 'Deployment' && o.metadata.name === name)
        .spec.template.spec.containers[0].ports.find((p: Obj) => p.name === 'ops').containerPort;
      expect(Number(port)).toBe(k8sPort);
      expect(Object.keys(svc.depends_on).sort()).toEqual(['migrate', 'postgres', 'rabbitmq', 'redis']);
    }
    expect(compose.services['inbound-smtp'].ports).toEqual(['${INBOUND_SMTP_PORT:-25}:2525']);
  });

  it('pins every image (tag other than latest, or a digest)', () => {
    const images = objs.flatMap((o) => (o.spec?.template?.spec?.containers ?? []).map((c: Obj) => c.image));
    expect(images.length).toBeGreaterThan(4);
    for (const img of images) expect(img).toMatch(/(@sha256:[0-9a-f]{64}|:(?!latest$)[\w.-]+)$/);
  });
});
