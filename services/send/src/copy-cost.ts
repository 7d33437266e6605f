/**
 * Estimated peak bytes of one copy in flight, from the size of its stored request (JSON text:
 * bodies plus base64 attachments): the rendered bodies, the built message and its DKIM-signed
 * copy, and the chunks of the build, about three times the request, plus a little overhead.
 * The request itself and its encoded attachments are shared by the copies of a send and are not
 * counted per copy.
 */
export function copyCostBytes(requestBytes: number): number {
  return 3 * requestBytes + 64 * 1024;
}
