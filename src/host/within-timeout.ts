/**
 * Waits for `work`, at most `timeoutMs` (its timer is cleared when `work` settles first).
 *
 * @returns `'done'`, or `'timeout'` when `timeoutMs` passed first
 * @throws what `work` rejects with, when it rejects first
 */
export async function withinTimeout(work: Promise<unknown>, timeoutMs: number): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    return await Promise.race([work.then(() => 'done' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
