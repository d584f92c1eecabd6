import { describe, expect, it } from 'vitest';
import { DeserializationError, NonRetriableError } from '../errors.js';
import { classifyError, defaultClassify, errorClassOf } from './classify-error.js';

const record = { key: 'k', value: 1, headers: {}, topic: 't', partition: 0, offset: 0, timestamp: 0 };

describe('defaultClassify', () => {
  it.each([
    [new TypeError('x'), 'dlq'],
    [new RangeError('x'), 'dlq'],
    [new SyntaxError('x'), 'dlq'],
    [new ReferenceError('x'), 'dlq'],
    [new DeserializationError('value', 'json'), 'dlq'],
    [new NonRetriableError('x'), 'dlq'],
    [Object.assign(new Error('x'), { retriable: false }), 'dlq'],
    [new Error('timeout'), 'retry'],
    [Object.assign(new Error('x'), { retriable: true }), 'retry'],
    ['a thrown string', 'retry'],
  ])('%s → %s', (error, expected) => {
    expect(defaultClassify(error)).toBe(expected);
  });
});

describe('classifyError', () => {
  it('uses the hook when there is one', () => {
    expect(classifyError(new TypeError('x'), record, () => 'retry')).toEqual({ classification: 'retry' });
  });

  it('dead-letters when the hook throws or answers nonsense', () => {
    expect(classifyError(new Error('x'), record, () => 'maybe' as never)).toMatchObject({
      classification: 'dlq',
      hookError: expect.stringMatching(/classify returned "maybe"/),
    });
    expect(
      classifyError(new Error('x'), record, () => {
        throw new Error('hook bug');
      }),
    ).toMatchObject({ classification: 'dlq', hookError: 'classify threw: hook bug' });
  });
});

describe('errorClassOf', () => {
  it('names subclasses, built-ins and non-errors', () => {
    class PaymentDeclined extends Error {}
    expect(errorClassOf(new PaymentDeclined('no'))).toBe('PaymentDeclined');
    expect(errorClassOf(new TypeError('no'))).toBe('TypeError');
    expect(errorClassOf(new NonRetriableError('no'))).toBe('NonRetriableError');
    expect(errorClassOf(new Error('no'))).toBe('Error');
    expect(errorClassOf('oops')).toBe('string');
    expect(errorClassOf({ code: 1 })).toBe('Object');
  });
});
