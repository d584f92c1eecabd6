import { z } from 'zod';

/**
 * The dedup store's address (`--redis-url`, `REDIS_URL`): `redis[s]://[[user]:password@]host[:port][/db]`,
 * checked as ioredis will read it, so that a value ioredis would throw on, or send to Redis as a
 * database NaN, fails at the start with exit 2 and says which part is wrong:
 * - not a URL at all (an unclosed `[`, a port that is not a number up to 65535, …);
 * - a scheme other than `redis:` or `rediss:` (TLS);
 * - no host;
 * - a user name or password with a malformed `%`-escape (ioredis decodes both with
 *   `decodeURIComponent`, which throws `URIError: URI malformed`);
 * - a path, or a `db=` parameter without one, that is not a database number (ioredis reads it
 *   as the database: NaN for a word, which it skips, staying in database 0).
 *
 * Blanks at either end are dropped (ioredis fails on a leading one).
 *
 * A database number the server does not have (past its `databases`, 16 by default) is found
 * only by Redis: the dedup store's calls fail then (`RedisDedupStore`).
 */
export const redisUrl = z
  .string()
  // Blanks at either end (a CRLF env file, a secret with a newline) are dropped, as zod's URL check did.
  .transform((value) => value.trim())
  .superRefine((value, ctx) => {
    const problem = redisUrlProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Redis numbers its databases with a C int: a path past this is no database of any server. */
const MAX_DATABASE = 2_147_483_647;

function redisUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a redis:// or rediss:// URL, redis://[[user]:password@]host[:port][/db] (this one does not parse: check the host, the port and any [ ])';
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return 'must be a redis:// or rediss:// URL';
  if (url.hostname === '') return 'must name a host, as in redis://127.0.0.1:6379';
  if (url.port === '0') return 'its port must be 1 to 65535';
  for (const [part, text] of [
    ['user name', url.username],
    ['password', url.password],
  ] as const) {
    try {
      decodeURIComponent(text);
    } catch {
      return `its ${part} has a '%' that is not a %-escape of two hex digits (write a literal '%' as %25)`;
    }
  }
  const path = url.pathname === '' || url.pathname === '/' ? undefined : url.pathname.slice(1);
  if (path !== undefined && !isDatabase(path))
    return `its path must be a database number from 0 to ${MAX_DATABASE}, as in redis://127.0.0.1:6379/0`;
  // ioredis takes ?db= when the path names none (the last one, when repeated).
  if (path === undefined && !url.searchParams.getAll('db').every(isDatabase))
    return `its db= parameter must be a database number from 0 to ${MAX_DATABASE}`;
  return undefined;
}

function isDatabase(text: string): boolean {
  return /^\d+$/.test(text) && Number(text) <= MAX_DATABASE;
}
