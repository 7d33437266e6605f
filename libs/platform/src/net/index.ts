/**
 * The one guarded outbound API (docs/architecture.md "Outbound connections"): every connection the
 * project opens to a target a user supplied goes through it. Three entry points, all refusing IP
 * literals and names that are or resolve to private, loopback, link-local, reserved or metadata
 * addresses (address-policy.ts), and names that do not resolve:
 *
 * - `guardedConnect`: a TCP or TLS socket (SMTP, MX delivery, reachability checks);
 * - `guardedAgent` / `guardedAgents` and `guardedRequest`: HTTP(S) through agents whose every
 *   connection is a guardedConnect (webhook deliveries; `got` takes the agents as they are);
 * - `resolveGuarded`: the check alone, with the checked address, for a caller that validates a
 *   host before storing it or hands the address to a client library (IMAP).
 *
 * `allowPrivate` is the one opt-out (tests and development reach loopback peers through it);
 * refusals are OutboundTargetError, whose message names the host and never the address.
 */
export { ipv6Words, isPrivateAddress } from './address-policy';
export { type OutboundTargetErrorCode, OutboundTargetError, isOutboundTargetError } from './outbound-error';
export { type GuardOptions, type ResolvedAddress, normalizeHost, resolveGuarded } from './guarded-resolve';
export { type GuardedConnectOptions, guardedConnect } from './guarded-connect';
export {
  type GuardedAgentOptions,
  type GuardedAgents,
  guardedAgent,
  guardedAgents,
  guardedRequest,
} from './guarded-http';
