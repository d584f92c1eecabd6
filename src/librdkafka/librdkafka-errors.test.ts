import { describe, expect, it } from 'vitest';
import { MemberFencedError } from '../errors.js';
import { ERR, FatalErrorWatch, isFatalError, isFencedError, memberCrashError, threadOf, withoutThreadPrefix } from './librdkafka-errors.js';

const error = (code: number, message = 'x', extra: object = {}) => Object.assign(new Error(message), { code, ...extra });

describe('librdkafka errors', () => {
  it('recognizes a fenced producer by code, also inside a fatal error or a cause', () => {
    expect(isFencedError(error(ERR.FENCED))).toBe(true);
    expect(isFencedError(error(ERR.PRODUCER_FENCED))).toBe(true);
    expect(isFencedError(error(ERR.INVALID_PRODUCER_EPOCH))).toBe(true);
    expect(isFencedError(error(ERR.FATAL, 'Fatal error: Broker: Producer fenced by newer instance'))).toBe(true);
    expect(isFencedError(new Error('wrapped', { cause: error(ERR.PRODUCER_FENCED) }))).toBe(true);
    expect(isFencedError(error(ERR.TIMED_OUT))).toBe(false);
    expect(isFencedError(undefined)).toBe(false);
  });

  it('recognizes fatal errors', () => {
    expect(isFatalError(error(ERR.TRANSPORT, 'x', { isFatal: true }))).toBe(true);
    expect(isFatalError(error(ERR.FATAL))).toBe(true);
    expect(isFatalError(error(ERR.TRANSPORT))).toBe(false);
  });

  it('makes a static member fenced by another instance a MemberFencedError, and leaves other crashes alone', () => {
    const fenced = error(ERR.FATAL, 'Fatal error: Broker: Static consumer fenced by other consumer with same group.instance.id');
    const crash = memberCrashError(fenced, 'app-host-1');
    expect(crash).toBeInstanceOf(MemberFencedError);
    expect(crash).toMatchObject({ cause: fenced });
    expect(memberCrashError(fenced, undefined)).toBe(fenced);
    const other = error(ERR.FATAL, 'Fatal error: Local: something else');
    expect(memberCrashError(other, 'app-host-1')).toBe(other);
  });
});

describe('the thread prefix of librdkafka log messages', () => {
  it('is cut off whole, IPv6 broker threads included, and names the thread', () => {
    const ipv6 = '[thrd:[::1]:9092/bootstrap]: [::1]:9092/bootstrap: Connect to ipv6#[::1]:9092 failed: Connection refused';
    expect(withoutThreadPrefix(ipv6)).toBe('[::1]:9092/bootstrap: Connect to ipv6#[::1]:9092 failed: Connection refused');
    expect(threadOf(ipv6)).toBe('[::1]:9092/bootstrap');
    expect(withoutThreadPrefix('[thrd:main]: Fatal error: Broker: x')).toBe('Fatal error: Broker: x');
    expect(threadOf('no prefix [thrd:main]: here')).toBeUndefined();
    expect(withoutThreadPrefix('no prefix')).toBe('no prefix');
  });
});

describe('FatalErrorWatch', () => {
  it("explains a bare fatal error or purged records by the client's FATAL log line, and leaves other errors alone", async () => {
    const watch = new FatalErrorWatch();
    const bare = error(ERR.FATAL, 'Local: Fatal error');
    const later = watch.explain(bare, 1_000);
    watch.logged({ severity: 0, fac: 'FATAL', message: '[thrd:main]: Fatal error: Broker: Producer fenced by newer instance' });
    const explained = await later;
    expect(explained).toMatchObject({ message: 'Fatal error: Broker: Producer fenced by newer instance', code: ERR.FATAL, cause: bare });
    expect(isFencedError(explained)).toBe(true);
    expect(isFencedError(await watch.explain(error(-152, 'Local: Purged in queue')))).toBe(true);
    const timedOut = error(ERR.TIMED_OUT);
    expect(await watch.explain(timedOut)).toBe(timedOut);
    watch.reset();
    expect(await watch.explain(bare, 20)).toBe(bare);
  });
});
