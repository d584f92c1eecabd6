/**
 * Serdes turn record keys and values into bytes and back, as in Kafka Streams' `Serde`.
 * Built-in serdes are named `'json'`, `'string'` and `'buffer'`; users can pass their own
 * object that implements {@link Serde}.
 */

/**
 * A serializer/deserializer pair. `null` stands for an absent key or a tombstone value and
 * passes through both directions unchanged in the built-in serdes.
 *
 * `deserialize` may throw: weir records a `DeserializationError` and sends the record to the
 * dead-letter queue unchanged. `serialize` may throw: the output is dead-lettered as a
 * `SerializationError`.
 */
export interface Serde<T = unknown> {
  /** Shown in `describe()` output and in error messages. */
  readonly name: string;
  serialize(value: T): Buffer | null;
  deserialize(data: Buffer | null): T;
}

/** The name of a built-in serde, or a serde object. */
export type SerdeSpec = BuiltInSerdeName | Serde<any>;

/** Names of the built-in serdes. */
export type BuiltInSerdeName = 'json' | 'string' | 'buffer';

const json: Serde<unknown> = {
  name: 'json',
  serialize: (value) => (value === null || value === undefined ? null : Buffer.from(JSON.stringify(value), 'utf8')),
  deserialize: (data) => (data === null ? null : JSON.parse(data.toString('utf8'))),
};

const string: Serde<string | null> = {
  name: 'string',
  serialize: (value) => {
    if (value === null || value === undefined) return null;
    if (typeof value !== 'string') throw new TypeError(`expected a string, got ${typeof value}`);
    return Buffer.from(value, 'utf8');
  },
  deserialize: (data) => (data === null ? null : data.toString('utf8')),
};

const buffer: Serde<Buffer | null> = {
  name: 'buffer',
  serialize: (value) => {
    if (value === null || value === undefined) return null;
    if (!Buffer.isBuffer(value)) throw new TypeError(`expected a Buffer, got ${typeof value}`);
    return value;
  },
  deserialize: (data) => data,
};

/** The built-in serdes, by name. */
export const serdes: Readonly<Record<BuiltInSerdeName, Serde<any>>> = Object.freeze({ json, string, buffer });

/**
 * Resolves a serde spec to a serde object.
 *
 * @returns the built-in serde for a name, or the given object when it implements {@link Serde}
 * @returns `undefined` when the spec is neither (the compiler turns that into a TopologyError
 *   naming the node)
 */
export function resolveSerde(spec: unknown): Serde<any> | undefined {
  if (typeof spec === 'string') return Object.hasOwn(serdes, spec) ? serdes[spec as BuiltInSerdeName] : undefined;
  if (
    typeof spec === 'object' &&
    spec !== null &&
    typeof (spec as Serde).name === 'string' &&
    typeof (spec as Serde).serialize === 'function' &&
    typeof (spec as Serde).deserialize === 'function'
  ) {
    return spec as Serde<any>;
  }
  return undefined;
}

/** How a serde spec reads in error messages: the name, or a short description of the value. */
export function describeSerdeSpec(spec: unknown): string {
  if (typeof spec === 'string') return `'${spec}'`;
  if (spec === null || spec === undefined) return String(spec);
  if (typeof spec === 'object' && typeof (spec as { name?: unknown }).name === 'string') {
    return `'${(spec as { name: string }).name}' (missing serialize/deserialize)`;
  }
  return typeof spec;
}
