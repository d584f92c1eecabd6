/**
 * Waits for `work`, at most `timeoutMs` (its timer is cleared when `work` settles first). A
 * rejection of `work` after the timeout is handled (ignored). `unref`: the timer alone does not
 * keep the process alive.
 *
 * @returns `'done'`, or `'timeout'` when `timeoutMs` passed first
 * @throws what `work` rejects with, when it rejects first
 */
export async function withinTimeout(
  work: Promise<unknown>,
  timeoutMs: number,
  options?: { readonly unref?: boolean },
): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    if (options?.unref === true) timer.unref();
  });
  try {
    return await Promise.race([work.then(() => 'done' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
