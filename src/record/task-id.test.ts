import { describe, expect, it } from 'vitest';
import { memberTransactionalId, taskId, transactionalId } from './task-id.js';

describe('task ids', () => {
  it('names tasks and transactional ids as Kafka Streams does: <topic>-<partition>, prefixed by the application id', () => {
    expect(taskId({ topic: 'orders', partition: 3 })).toBe('orders-3');
    expect(transactionalId('app', { topic: 'orders', partition: 3 })).toBe('app-orders-3');
    expect(memberTransactionalId('app', 'host-1')).toBe('app-host-1');
  });
});
