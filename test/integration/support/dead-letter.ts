/**
 * Dead-letter records as weir writes them, for tests that put them on a DLQ of their own (the
 * `weir dlq` tools: dlq-tools-*.test.ts).
 */
import type { Message } from 'kafkajs';

/** How {@link deadLetter} describes the failure of record `n`. */
export interface DeadLetterOptions {
  readonly original: string;
  readonly errorClass: string;
  readonly processor: string;
  readonly failedAtMs: number;
  readonly replayCount?: number;
  readonly replayMax?: number;
}

/** A dead-letter record as weir writes it. */
export function deadLetter(n: number, o: DeadLetterOptions): Message {
  return {
    key: `k${n}`,
    value: JSON.stringify({ n }),
    headers: {
      trace: `t${n}`,
      'weir.original.topic': o.original,
      'weir.original.partition': '0',
      'weir.original.offset': String(n),
      'weir.original.timestamp': String(o.failedAtMs - 1000),
      'weir.application.id': 'app',
      'weir.processor': o.processor,
      'weir.attempts': '3',
      'weir.error.class': o.errorClass,
      'weir.error.message': `record ${n} failed`,
      'weir.error.stack': `${o.errorClass}: record ${n} failed\n    at p`,
      'weir.first.failure.ms': String(o.failedAtMs - 500),
      'weir.last.failure.ms': String(o.failedAtMs),
      ...(o.replayCount !== undefined ? { 'weir.replay.count': String(o.replayCount) } : {}),
      ...(o.replayMax !== undefined ? { 'weir.replay.max': String(o.replayMax) } : {}),
    },
  };
}
