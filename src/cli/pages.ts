// Reading every page of a paged list of the registry, one request a page.

/** A page as a list route answers it: its items, and whether it is the last. */
export interface Page<T> {
  items: T[];
  last: boolean;
}

/**
 * Every item of a paged list: page 1, 2, … until a page says it is the last or comes back empty (a
 * registry whose count is wrong cannot keep the loop going with empty pages).
 */
export async function allPages<T>(read: (page: number) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const answer = await read(page);
    items.push(...answer.items);
    if (answer.last || !answer.items.length) return items;
  }
}
