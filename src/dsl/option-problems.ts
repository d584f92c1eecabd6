import type { z } from 'zod';

/** A value as validation messages quote it: strings in quotes, so `"3"` and `3` differ. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

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

/**
 * The field schema at `path` inside an object schema (through wrappers such as `.optional()`,
 * `.default()` and `.readonly()`, and through arrays), or undefined.
 */
function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = schema;
  for (const key of path) {
    current = unwrap(current);
    if (current === undefined) return undefined;
    const def = (current as { def: { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType } }).def;
    if (def.type === 'object') current = def.shape?.[String(key)];
    else if (def.type === 'array') current = def.element;
    else return undefined;
  }
  return current;
}

/** The schema kinds that wrap one inner schema (`def.innerType`) and add no shape of their own. */
const WRAPPERS: ReadonlySet<string> = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly']);

function inner(schema: z.ZodType): z.ZodType | undefined {
  const def = (schema as { def: { type: string; innerType?: z.ZodType } }).def;
  return WRAPPERS.has(def.type) ? def.innerType : undefined;
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (current !== undefined && inner(current) !== undefined) current = inner(current);
  return current;
}

/** The `.describe()` text of a schema or, first found, of a schema it wraps. */
function descriptionOf(schema: z.ZodType | undefined): string | undefined {
  for (let current = schema; current !== undefined; current = inner(current))
    if (current.description !== undefined) return current.description;
  return undefined;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** `retry.tiers[1]`, `retry.backoff.maxMs`: a path as option messages name it. */
export function fieldName(where: string, path: readonly PropertyKey[]): string {
  let name = where;
  for (const key of path) name = typeof key === 'number' ? `${name}[${key}]` : name === '' ? String(key) : `${name}.${String(key)}`;
  return name;
}

/** How {@link optionProblems} names an options object and its fields. */
export interface OptionNames {
  /** Prefix of field names: `'retry'` gives `retry.maxAttempts`; `''` gives `maxAttempts`. */
  readonly prefix: string;
  /** The object itself, when it is not an object at all: `'retry'`, `'process options'`. */
  readonly root: string;
  /** Where unknown keys were found: `'the process options'`, `sink('out')`; default `root`. */
  readonly unknownIn?: string;
}

/**
 * Turns a zod error on an options object into weir's option messages, unknown keys first:
 * - `unknown option 'retyr' in the process options (known: retry, classify, dedup)`;
 * - `retry.maxAttempts must be an integer ≥ 1 (got 0)`: the field's name, then its schema's
 *   description (set with `.describe('must be …')`), then the value when it is a scalar;
 * - a custom issue whose message starts with `!` (a rule across fields, from `superRefine`)
 *   stands alone, without the `!`.
 *
 * @param schema the schema that was parsed
 * @param input the value that was parsed
 */
export function optionProblems(schema: z.ZodType, input: unknown, error: z.ZodError, names: OptionNames): string[] {
  const unknown: string[] = [];
  const fields: string[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      const object = unwrap(schemaAt(schema, issue.path));
      const known = Object.keys((object as { def: { shape?: object } } | undefined)?.def.shape ?? {});
      const problem = unknownKeysProblem(valueAt(input, issue.path), known, fieldName(names.unknownIn ?? names.root, issue.path));
      if (problem !== undefined) unknown.push(problem);
      continue;
    }
    if (issue.code === 'custom' && issue.message.startsWith('!')) {
      fields.push(issue.message.slice(1));
      continue;
    }
    const name = issue.path.length === 0 ? names.root : fieldName(names.prefix, issue.path);
    const field = schemaAt(schema, issue.path);
    const description = descriptionOf(field) ?? 'is invalid';
    const value = valueAt(input, issue.path);
    const shown = typeof value === 'object' && value !== null ? '' : ` (got ${showValue(value)})`;
    const problem = `${name} ${description}${shown}`;
    if (!fields.includes(problem)) fields.push(problem);
  }
  return [...unknown, ...fields];
}
