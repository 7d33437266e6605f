/**
 * k8s/ (issue 13): both overlays render with `kubectl kustomize`, every object validates against
 * the official schemas shipped by `kubernetes-models` (offline), and the invariants hold: every
 * Deployment has probes, resources, a non-root read-only security context and topology spread;
 * gateway, send and dispatcher have an HPA; every Deployment a PDB; inbound is a LoadBalancer on
 * 25; every env var the code reads is provided (ConfigMap or Secret) and documented in
 * .env.example; images are pinned; no secret values in ConfigMaps.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { parseAllDocuments } from 'yaml';
import { EnvSchema } from '../libs/platform/src/config/env';
import { TrackingEnvSchema } from '../services/tracking/src/settings';

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

/** Every variable the code reads: the platform schema, tracking's own, and the logger's switch. */
const CODE_ENV = [...Object.keys(EnvSchema.shape), ...Object.keys(TrackingEnvSchema.shape), 'LOG_SILENT'];
const SECRET_NAMES = /(_URL$|_KEY$|SECRET|PASSWORD|TOKEN)/;

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
    expect(deps.map((d) => d.metadata.name).sort()).toEqual([
      'gateway',
      'send',
      'tracking',
      'webhook-dispatcher',
    ]);
    for (const d of deps) {
      const spec = d.spec.template.spec;
      expect(spec.securityContext.runAsNonRoot).toBe(true);
      expect(spec.topologySpreadConstraints.length).toBeGreaterThan(0);
      for (const c of spec.containers) {
        expect(c.readinessProbe.httpGet.path).toBe('/readyz');
        expect(c.livenessProbe.httpGet.path).toBe('/healthz');
        expect(c.resources.requests.cpu && c.resources.requests.memory).toBeTruthy();
        expect(c.resources.limits.memory).toBeTruthy();
        expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
        expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
        expect(c.envFrom.map((e: Obj) => e.configMapRef?.name ?? e.secretRef?.name).length).toBe(2);
      }
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
    const inbound = all('Service').find((s) => s.metadata.name === 'inbound');
    expect(inbound.spec.type).toBe('LoadBalancer');
    expect(inbound.spec.ports[0].port).toBe(25);
    expect(
      all('NetworkPolicy').some((n) => n.spec.podSelector && Object.keys(n.spec.podSelector).length === 0),
    ).toBe(true);
  });

  it('every env var the code reads is provided, none with a secret in the ConfigMap; all documented in .env.example', () => {
    const cm = all('ConfigMap').find((c) => c.metadata.name.startsWith('mailyard-config'));
    const secret = all('Secret').find((s) => s.metadata.name.startsWith('mailyard-secrets'));
    const provided = new Set([...Object.keys(cm.data), ...Object.keys(secret.data)]);
    expect(CODE_ENV.filter((k) => !provided.has(k))).toEqual([]);
    expect(Object.keys(cm.data).filter((k) => SECRET_NAMES.test(k) && k !== 'TRACKING_BASE_URL')).toEqual([]);
    const example = readFileSync(join(REPO_ROOT, '.env.example'), 'utf8');
    const compose = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
    const undocumented = CODE_ENV.filter(
      (k) => !new RegExp(`^#? ?${k}=`, 'm').test(example) && !compose.includes(`${k}:`),
    );
    expect(undocumented).toEqual([]);
  });

  it('pins every image (tag other than latest, or a digest)', () => {
    const images = objs.flatMap((o) => (o.spec?.template?.spec?.containers ?? []).map((c: Obj) => c.image));
    expect(images.length).toBeGreaterThan(4);
    for (const img of images) expect(img).toMatch(/(@sha256:[0-9a-f]{64}|:(?!latest$)[\w.-]+)$/);
  });
});
