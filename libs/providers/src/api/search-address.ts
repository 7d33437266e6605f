/**
 * Provider search queries (Gmail `q`, Graph KQL `$search`) put the participant address into a
 * query string: it must be a bare address that cannot end the term or start another one.
 */
const SEARCHABLE_ADDRESS = /^[^\s"'(){}<>,;:\\[\]@]+@[^\s"'(){}<>,;:\\[\]@]+$/;

export function assertSearchableAddress(address: string): void {
  if (!SEARCHABLE_ADDRESS.test(address))
    throw new TypeError(`participant must be a bare email address, got ${JSON.stringify(address)}`);
}
