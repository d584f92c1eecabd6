/**
 * Names the keys of an options object that weir does not know — a typo such as `retyr` or
 * `maxAttempt` would otherwise be ignored silently and the default used.
 *
 * @returns the problem, naming the unknown keys and the known ones, or `undefined`
 */
export function unknownKeysProblem(value: unknown, known: readonly string[], where: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length === 0) return undefined;
  const names = unknown.map((key) => `'${key}'`).join(', ');
  return `unknown ${unknown.length === 1 ? 'option' : 'options'} ${names} in ${where} (known: ${known.join(', ')})`;
}
