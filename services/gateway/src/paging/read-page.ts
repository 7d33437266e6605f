import { ErrorText } from '@mailyard/contracts';
import { badRequest } from '@mailyard/platform';
import { InvalidCursorError } from '@mailyard/store';

/** Reads one page of a store list; a page token that is not ours answers 400 `Invalid pageToken`. */
export async function readPage<T>(list: () => Promise<T>): Promise<T> {
  try {
    return await list();
  } catch (err) {
    if (err instanceof InvalidCursorError) throw badRequest(ErrorText.invalidPageToken);
    throw err;
  }
}
