/**
 * `value` as a config error may echo it: the password of a URL's user part (`//user:***@`) and
 * a `password=` query parameter (`password=***`) hidden, also in a URL too malformed to parse.
 */
export function maskedSecrets(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  // As a URL parser reads it: the user part ends at the last '@' before the path, query or
  // fragment, blanks and all; a parameter at the next '&' or '#'.
  return value.replace(/(\/\/[^/?#:@]*:)[^/?#]*@/g, '$1***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}
