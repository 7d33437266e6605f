/**
 * SparkPost mailers over the API (docs/api/mailers.md "SparkPost mailers", DESIGN "Provider
 * mailers and their callbacks"): create and update, apart from HTTP.
 *
 * - The API key is sealed in `mailers.secret` like every mailer credential and never returned.
 * - At create the mailer gets callback credentials for SparkPost's webhook: a username (the
 *   mailer id) and a password issued with issueSecret, shown in the create answer only and stored
 *   as its digest (`callback_username`, `callback_password_digest`, migration 0027). The URL is
 *   `{TRACKING_BASE_URL}/callbacks/sparkpost/{mailer_id}` (the tracking service's endpoint).
 * - The key is not checked against SparkPost at create or update (saved as given, verified by
 *   `none` in the capability table): a wrong key shows at the first send, which deactivates the
 *   mailer with `provider_auth_error` and tells why. A check would need a second permission on
 *   the key (Account: Read) that a send-only key does not have.
 * - A `base_url` (e.g. SparkPost EU) is a tenant's target: its host passes the mailer host check
 *   (host-guard.ts) at create, at every change and on enable, and the send connects through the
 *   guarded connect. Changing it needs `api_key` again (docs/architecture.md, security 7): the
 *   stored key is never sent to a new destination. A new key re-activates a deactivated mailer.
 */
import {
  type CreateSparkPostMailerRequest,
  IdPrefix,
  type MailerCallbackView,
  MailerErrorText,
  type UpdateSparkPostMailerRequest,
  credentialNeededAgain,
  mailerCapabilities,
  newId,
} from '@mailyard/contracts';
import { HttpError, TrackingPath, badRequest, digestSecret, issueSecret, notFound } from '@mailyard/platform';
import { type MailerPatch, type SparkPostSettings, mailers } from '@mailyard/store';
import { type MailerChangeDeps, loadMailer } from './mailer-changes';

/** Issued callback passwords start with this, so a leaked one is recognisable. */
const CALLBACK_PASSWORD_PREFIX = 'spcb_';

/** The callback URL and username of a SparkPost mailer. */
export function sparkPostCallback(
  trackingBaseUrl: string,
  mailerId: string,
  username: string,
): MailerCallbackView {
  return { url: `${trackingBaseUrl}${TrackingPath.sparkPostCallback(mailerId)}`, username };
}

/** Creates a SparkPost mailer; returns its id and the callback password (shown once). */
export async function createSparkPostMailer(
  deps: MailerChangeDeps,
  tenantId: string,
  input: CreateSparkPostMailerRequest,
): Promise<{ id: string; username: string; password: string }> {
  const baseUrl = input.config.base_url;
  if (baseUrl) await deps.assertHost(new URL(baseUrl).hostname);
  const id = newId(IdPrefix.sparkpost);
  const password = issueSecret(CALLBACK_PASSWORD_PREFIX);
  const config: SparkPostSettings = baseUrl ? { base_url: baseUrl } : {};
  await mailers.create(deps.db, tenantId, {
    id,
    configType: 'sparkpost',
    connectionType: 'basic',
    name: input.name,
    email: input.email,
    config,
    sealedSecret: deps.sealer.seal(input.config.api_key),
    callback: { username: id, passwordDigest: digestSecret(password) },
  });
  return { id, username: id, password };
}

/** Applies PUT /v1/mailer/sparkpost; 404 unknown, 422 not a SparkPost mailer, 400 api_key missing. */
export async function updateSparkPostMailer(
  deps: MailerChangeDeps,
  tenantId: string,
  input: UpdateSparkPostMailerRequest,
): Promise<string> {
  const mailer = await loadMailer(deps.db, tenantId, input.mailer_id);
  if (mailerCapabilities(mailer.configType).protocol !== 'sparkpost')
    throw new HttpError(422, MailerErrorText.notSparkPostMailer);
  const patch: MailerPatch = { name: input.name, email: input.email };
  const { api_key: apiKey, base_url: baseUrl } = input.config ?? {};
  if (baseUrl !== undefined) {
    const again = credentialNeededAgain({
      before: { base_url: mailer.config.base_url ?? null },
      after: { base_url: baseUrl },
      stored: mailer.passwordSet,
      given: apiKey !== undefined,
    });
    if (again) throw badRequest(MailerErrorText.apiKeyForChange);
    if (baseUrl) await deps.assertHost(new URL(baseUrl).hostname);
    patch.config = baseUrl ? { base_url: baseUrl } : {};
  }
  if (apiKey !== undefined) {
    patch.sealedSecret = deps.sealer.seal(apiKey);
    // A new key is the owner's answer to a refused one: a deactivated mailer sends again.
    patch.reauthenticated = true;
  }
  if (!(await mailers.update(deps.db, mailer.tenantId, mailer.id, patch)))
    throw notFound(MailerErrorText.mailerNotFound);
  return mailer.id;
}
