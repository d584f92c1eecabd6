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
 * - a path that is not a database number (ioredis reads the path as the database, NaN for a word);
 * - a blank at either end (ioredis throws `Invalid URL` on a leading one).
 *
 * A database number the server does not have (past its `databases`, 16 by default) is found
 * only by Redis: the dedup store's calls fail then (`RedisDedupStore`).
 */
export const redisUrl = z.string().superRefine((value, ctx) => {
  const problem = redisUrlProblem(value);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** Redis numbers its databases with a C int: a path past this is no database of any server. */
const MAX_DATABASE = 2_147_483_647;

function redisUrlProblem(value: string): string | undefined {
  // The URL parser here trims them; ioredis does not, and fails at the store's first use.
  if (value.trim() !== value) return 'must not start or end with a space or another blank';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a redis:// or rediss:// URL, redis://[[user]:password@]host[:port][/db] (this one does not parse: check the host, the port and any [ ])';
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return 'must be a redis:// or rediss:// URL';
  if (url.hostname === '') return 'must name a host, as in redis://127.0.0.1:6379';
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
  if (url.pathname !== '' && url.pathname !== '/' && !(/^\/\d+$/.test(url.pathname) && Number(url.pathname.slice(1)) <= MAX_DATABASE)) {
    return 'its path must be a database number, as in redis://127.0.0.1:6379/0';
  }
  return undefined;
}
