/**
 * AMQP topic-exchange matching, as RabbitMQ does it: routing keys and patterns are words
 * separated by `.`; in a pattern `*` matches exactly one word and `#` zero or more words.
 * The empty routing key has zero words (only `#` matches it).
 */
export function topicMatches(pattern: string, routingKey: string): boolean {
  const p = splitWords(pattern);
  const k = splitWords(routingKey);
  // reachable[j]: the first i pattern words can match the first j key words.
  let reachable = new Array<boolean>(k.length + 1).fill(false);
  reachable[0] = true;
  for (const word of p) {
    const next = new Array<boolean>(k.length + 1).fill(false);
    if (word === '#') {
      // `#` extends any reachable prefix by zero or more words.
      let seen = false;
      for (let j = 0; j <= k.length; j++) {
        seen = seen || reachable[j]!;
        next[j] = seen;
      }
    } else {
      for (let j = 1; j <= k.length; j++) {
        next[j] = reachable[j - 1]! && (word === '*' || word === k[j - 1]);
      }
    }
    reachable = next;
  }
  return reachable[k.length]!;
}

function splitWords(s: string): string[] {
  return s === '' ? [] : s.split('.');
}
