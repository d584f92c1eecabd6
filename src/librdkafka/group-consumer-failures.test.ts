import { describe, expect, it } from 'vitest';
import { ClientMismatchError, MemberFencedError } from '../errors.js';
import { captureLog } from '../observability/log-capture.test-support.js';
import { ERR } from './librdkafka-errors.js';
import { GroupConsumerFailures } from './group-consumer-failures.js';
import type { LibrdkafkaError } from './librdkafka-native.js';

const OPTIONS = { groupId: 'orders', topics: ['in'], sessionTimeoutMs: 6_000, heartbeatIntervalMs: 2_000, readCommitted: true };
const refused = (): LibrdkafkaError =>
  Object.assign(new Error('Broker: Inconsistent group protocol'), { code: 23, isFatal: false }) as LibrdkafkaError;

function failures(options: Partial<typeof OPTIONS> & { groupInstanceId?: string } = {}) {
  const { logger, lines } = captureLog();
  const routed: unknown[] = [];
  const f = new GroupConsumerFailures({ ...OPTIONS, ...options }, logger, { errorEvent: (e) => routed.push(e) });
  return { f, lines, routed };
}

describe('GroupConsumerFailures', () => {
  it('goes on through refused joins shorter than the session timeout (one warn), and stops with a final ClientMismatchError after it', async () => {
    const { f, lines, routed } = failures();
    expect(await f.consumeFailed(refused(), 1_000)).toBeUndefined();
    expect(await f.consumeFailed(refused(), 3_000)).toBeUndefined();
    expect(await f.consumeFailed(refused(), 6_999)).toBeUndefined();
    expect(lines.filter((l) => l['msg'] === 'the consumer group refuses this member')).toHaveLength(1);
    const crash = await f.consumeFailed(refused(), 7_000);
    expect(crash?.error).toBeInstanceOf(ClientMismatchError);
    expect(crash?.error).toMatchObject({ retriable: false, client: 'librdkafka', groupId: 'orders' });
    expect((crash?.error as Error).message).toMatch(/--client librdkafka member for 6 s.*same --client/);
    expect(routed).toEqual([]);
  });

  it('counts afresh after an assignment', async () => {
    const { f, lines } = failures();
    expect(await f.consumeFailed(refused(), 0)).toBeUndefined();
    f.joined();
    expect(await f.consumeFailed(refused(), 6_500)).toBeUndefined();
    expect(lines.filter((l) => l['msg'] === 'the consumer group refuses this member')).toHaveLength(2);
    expect(await f.consumeFailed(refused(), 12_500)).toMatchObject({ error: { retriable: false } });
  });

  it('routes what librdkafka retries itself to the log router, and stops on a fatal error (a fenced static member as MemberFencedError)', async () => {
    const { f, routed } = failures({ groupInstanceId: 'pod-7' });
    const transport = Object.assign(new Error('Local: Broker transport failure'), { code: ERR.TRANSPORT }) as LibrdkafkaError;
    expect(await f.consumeFailed(transport, 0)).toBeUndefined();
    expect(routed).toEqual([transport]);
    const fenced = Object.assign(new Error('Fatal error: Broker: Static consumer fenced by other consumer with same group.instance.id'), {
      code: ERR.FENCED_INSTANCE_ID,
      isFatal: true,
    });
    const crash = await f.consumeFailed(fenced, 0);
    expect(crash?.error).toBeInstanceOf(MemberFencedError);
    expect(crash?.error).toMatchObject({ groupInstanceId: 'pod-7', cause: fenced });
  });

  it('states a bare ERR__FATAL as librdkafka logged its cause', async () => {
    const { f } = failures();
    f.logged({ severity: 0, fac: 'FATAL', message: '[thrd:main]: Fatal error: Broker: something broke' });
    const crash = await f.consumeFailed(Object.assign(new Error('Local: Fatal error'), { code: ERR.FATAL, isFatal: true }), 0);
    expect((crash?.error as Error).message).toBe('Fatal error: Broker: something broke');
  });

  it('says the consumer failed fatally when only the FATAL log line or a failed commit told, not a consume call (the binding drops that error after records)', async () => {
    const { f } = failures({ groupInstanceId: 'worker-x' });
    expect(await f.fatalSeen()).toBeUndefined();
    // A commit that failed for another reason does not end the consumer.
    f.callFailed(Object.assign(new Error('Broker: Request timed out'), { code: 7, isFatal: false }));
    f.logged({ severity: 6, fac: 'COMMIT', message: 'OffsetCommit failed: Broker: Request timed out' });
    expect(await f.fatalSeen()).toBeUndefined();

    f.logged({
      severity: 0,
      fac: 'FATAL',
      message: '[thrd:main]: Fatal error: Broker: Static consumer fenced by other consumer with same group.instance.id',
    });
    const seen = await f.fatalSeen();
    expect(seen?.error).toBeInstanceOf(MemberFencedError);
    expect(seen?.error).toMatchObject({ groupInstanceId: 'worker-x' });
  });

  it('ends the consumer on a commit that failed fatally, stated as the log line that followed it', async () => {
    const { f } = failures({ groupInstanceId: 'worker-x' });
    f.callFailed(Object.assign(new Error('Local: Fatal error'), { code: ERR.FATAL, isFatal: true }));
    const later = f.fatalSeen();
    f.logged({
      severity: 0,
      fac: 'FATAL',
      message: 'Fatal error: Broker: Static consumer fenced by other consumer with same group.instance.id',
    });
    expect((await later)?.error).toBeInstanceOf(MemberFencedError);
  });
});
