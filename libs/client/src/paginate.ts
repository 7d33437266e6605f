/**
 * Async iteration over a `pageToken`-paged list: fetches a page, yields its items, follows the
 * next token until it is null. Lists name the token `nextPageToken` (logs, domains, mailers,
 * deliveries) or `next_page_token` (templates, as the API contract has it; docs/api/conventions.md "Lists"); both are read.
 */
export interface Page<T> {
  items: T[];
  nextPageToken: string | null;
}

export async function* paginate<T>(
  fetchPage: (pageToken: string | undefined) => Promise<Page<T>>,
  firstToken?: string,
): AsyncGenerator<T, void, undefined> {
  let token = firstToken;
  const seen = new Set<string>();
  for (;;) {
    const page = await fetchPage(token);
    yield* page.items;
    if (!page.nextPageToken) return;
    // A server that hands back a token it gave before would loop forever.
    if (seen.has(page.nextPageToken)) throw new Error('pagination: the server repeated a pageToken');
    seen.add(page.nextPageToken);
    token = page.nextPageToken;
  }
}
