import { withoutPasswords } from '../dedup/redis-dedup-store.js';

/** Longest value a config error echoes, characters; a longer one is cut with '…'. */
const MAX_ECHO = 300;

/**
 * `value` as a config error may echo it, without a password: in a URL with a host and no `@`
 * past it, its user part's password and a `password=` parameter become `***` (read by the URL
 * parser ioredis uses); in anything else that holds an `@` (a URL too malformed to parse, one
 * without `//`, one whose path holds an `@`), everything between the scheme and the last `@`,
 * user name included, and any `password=` parameter. Strings longer than 300 characters are cut.
 */
export function maskedSecrets(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return cut(masked(value));
}

function masked(value: string): string {
  if (!value.includes('@') && !/[?&]password=/i.test(value)) return value;
  try {
    const url = new URL(value.trim());
    const shown = withoutPasswords(url);
    // An '@' past the host means the parser split what a reader may take for a password (an
    // unencoded '/' in it, say): hidden below like an unparsable value.
    if (url.hostname !== '' && !`${url.pathname}${url.search}${url.hash}`.includes('@')) return shown;
  } catch {
    // Masked below: the parts cannot be told apart, so all that may be a password is hidden.
  }
  return value
    .replace(/^(\s*[A-Za-z][A-Za-z0-9+.-]*:\/{0,2})?[^]*@/, (_, scheme: string | undefined) => `${scheme ?? ''}***@`)
    .replace(/([?&]password=)[^&#]*/gi, '$1***');
}

function cut(value: string): string {
  return value.length <= MAX_ECHO ? value : `${value.slice(0, MAX_ECHO)}…`;
}
