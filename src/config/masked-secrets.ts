/**
 * `value` as a config error may echo it: the password of a URL's user part (`//user:***@`) and
 * a `password=` query parameter (`password=***`) hidden, also in a URL too malformed to parse.
 */
export function maskedSecrets(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  // A password runs to the '@' (or the parameter to the next '&' or '#'), spaces and all.
  return value.replace(/(\/\/[^/:@\s]*:)[^@]*@/g, '$1***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}
