export * from './classify-smtp-error';
export type { Envelope, RecipientResult } from './delivery';
export { type DestinationOptions, type PoolCacheOptions, PoolCache, settingsKey } from './pool-cache';
export type { SmtpPoolOptions, SmtpSendInfo } from './smtp-pool';
export { type SmtpSettings, verifySmtp } from './smtp-verify';
export { smtpTlsOptions } from './tls-mode';
