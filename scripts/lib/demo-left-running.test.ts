import { describe, expect, it } from 'vitest';
import { demoLeftRunning } from './demo-left-running.js';

describe('demoLeftRunning (the demo says how to stop what it started)', () => {
  it('names npm run kafka:stop for a broker it started, and --redis for a Redis it started too', () => {
    expect(demoLeftRunning({ kafka: true, redis: false }, '127.0.0.1:9092')).toBe(
      'the Kafka broker it started keeps running on 127.0.0.1:9092 for the next run; stop it with `npm run kafka:stop`',
    );
    expect(demoLeftRunning({ kafka: true, redis: true }, '127.0.0.1:9092')).toContain(
      '`npm run kafka:stop` (add `-- --redis` to stop the Redis the demo started too)',
    );
    expect(demoLeftRunning({ kafka: false, redis: true }, '127.0.0.1:9092')).toBe(
      'the Redis it started keeps running; stop it with `npm run kafka:stop -- --redis`',
    );
  });

  it('says nothing when it found both running', () => {
    expect(demoLeftRunning({ kafka: false, redis: false }, '127.0.0.1:9092')).toBeUndefined();
  });
});
