import { describe, expect, it } from 'vitest';
import { describeSerdeSpec, resolveSerde, serdes, type Serde } from './serdes.js';

describe('built-in serdes', () => {
  it('json round-trips values and maps null and undefined to a null payload (a tombstone)', () => {
    for (const value of [{ a: 1, b: [true, 'x'] }, 'text', 0, [1, 2]])
      expect(serdes.json.deserialize(serdes.json.serialize(value))).toEqual(value);
    expect(serdes.json.serialize(null)).toBeNull();
    expect(serdes.json.serialize(undefined)).toBeNull();
    expect(serdes.json.deserialize(null)).toBeNull();
  });

  it('json throws on bytes that are not JSON (the task turns that into a dead letter)', () => {
    expect(() => serdes.json.deserialize(Buffer.from('{not json'))).toThrow(SyntaxError);
  });

  it('string accepts strings only, and keeps UTF-8', () => {
    expect(serdes.string.serialize('grüße ✓')).toEqual(Buffer.from('grüße ✓', 'utf8'));
    expect(serdes.string.deserialize(Buffer.from('grüße ✓', 'utf8'))).toBe('grüße ✓');
    expect(() => serdes.string.serialize(42)).toThrow('expected a string, got number');
  });

  it('buffer passes Buffers through and refuses anything else', () => {
    const bytes = Buffer.from([0, 255, 7]);
    expect(serdes.buffer.serialize(bytes)).toBe(bytes);
    expect(serdes.buffer.deserialize(bytes)).toBe(bytes);
    expect(() => serdes.buffer.serialize('text')).toThrow('expected a Buffer, got string');
  });
});

describe('resolveSerde', () => {
  it('resolves the built-in names, and an object with name, serialize and deserialize as itself', () => {
    expect(resolveSerde('json')).toBe(serdes.json);
    expect(resolveSerde('string')).toBe(serdes.string);
    const custom: Serde<number> = { name: 'int', serialize: (n) => Buffer.from(String(n)), deserialize: (b) => Number(b?.toString()) };
    expect(resolveSerde(custom)).toBe(custom);
  });

  it('resolves nothing else, including names inherited from Object', () => {
    for (const spec of ['avro', 'toString', 'constructor', { name: 'half', serialize: () => null }, null, 3])
      expect(resolveSerde(spec)).toBeUndefined();
  });

  it('describes a spec for an error message', () => {
    expect(describeSerdeSpec('avro')).toBe("'avro'");
    expect(describeSerdeSpec({ name: 'half' })).toBe("'half' (missing serialize/deserialize)");
    expect(describeSerdeSpec(null)).toBe('null');
    expect(describeSerdeSpec(3)).toBe('number');
  });
});
