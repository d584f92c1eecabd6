import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { loadWorkerConfig } from './worker-config.js';

function configError(redisUrl: string): string {
  try {
    loadWorkerConfig({ redisUrl }, {});
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  return 'no error';
}

/** What ioredis makes of `url` without connecting: the options it parsed, or the error it threw. */
function ioredisReads(url: string): { error?: string; db?: unknown } {
  try {
    const client = new Redis(url, { lazyConnect: true });
    const { db } = client.options;
    client.disconnect();
    return { db };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('--redis-url', () => {
  it.each([
    ['redis://127.0.0.1:6379', 0],
    ['rediss://u:p%40ss@cache.internal:6380/3', 3],
    ['redis://:pw@[::1]:6379/', 0],
    ['redis://h', 0],
  ])('takes %s', (url, db) => {
    expect(loadWorkerConfig({ redisUrl: url }, {}).redisUrl).toBe(url);
    expect(ioredisReads(url)).toEqual({ db });
  });

  it('refuses a %-escape ioredis cannot decode, naming the flag and the part, with the password hidden', () => {
    const url = 'redis://u:p%zzLEAK@127.0.0.1:6379';
    expect(ioredisReads(url).error).toMatch(/URI malformed/);
    const message = configError(url);
    expect(message).toMatch(/--redis-url.*password has a '%' that is not a %-escape/);
    expect(message).not.toContain('LEAK');
    expect(configError('redis://us%er@127.0.0.1')).toMatch(/user name has a '%'/);
  });

  it('says a port that is not a number does not parse, rather than that the scheme is wrong', () => {
    expect(configError('redis://127.0.0.1:abc')).toMatch(/does not parse: check the host, the port/);
    expect(configError('redis://127.0.0.1:65536')).toMatch(/does not parse/);
    expect(configError('redis://127.0.0.1:0')).toMatch(/port must be 1 to 65535/);
  });

  it('refuses a path that is not a database number, which ioredis would read as database NaN', () => {
    expect(ioredisReads('redis://127.0.0.1:6379/cache')).toEqual({ db: Number.NaN });
    expect(configError('redis://127.0.0.1:6379/cache')).toMatch(/--redis-url.*path must be a database number/);
  });

  it('drops blanks at either end, which ioredis does not (it fails on a leading one)', () => {
    expect(ioredisReads(' redis://127.0.0.1:6379').error).toMatch(/Invalid URL/);
    expect(loadWorkerConfig({ redisUrl: ' redis://127.0.0.1:6379\r\n' }, {}).redisUrl).toBe('redis://127.0.0.1:6379');
  });

  it('refuses a database number past any server (Redis numbers them with a C int)', () => {
    expect(configError('redis://127.0.0.1:6379/99999999999999999999')).toMatch(/path must be a database number/);
    expect(loadWorkerConfig({ redisUrl: 'redis://127.0.0.1:6379/2147483647' }, {}).redisUrl).toMatch(/2147483647$/);
  });

  it('refuses a db= parameter that is not a database number when the path names none', () => {
    expect(ioredisReads('redis://127.0.0.1:6379?db=cache')).toEqual({ db: Number.NaN });
    expect(configError('redis://127.0.0.1:6379?db=cache')).toMatch(/--redis-url.*db= parameter must be a database number/);
    expect(loadWorkerConfig({ redisUrl: 'redis://127.0.0.1:6379?db=3' }, {}).redisUrl).toMatch(/db=3$/);
    expect(ioredisReads('redis://127.0.0.1:6379?db=3&db=cache')).toEqual({ db: Number.NaN });
    expect(configError('redis://127.0.0.1:6379?db=3&db=cache')).toMatch(/db= parameter must be a database number/);
    expect(ioredisReads('redis://127.0.0.1:6379/2?db=cache')).toEqual({ db: 2 });
    expect(loadWorkerConfig({ redisUrl: 'redis://127.0.0.1:6379/2?db=cache' }, {}).redisUrl).toMatch(/\/2\?db=cache$/);
  });

  it('refuses another scheme and a URL without a host', () => {
    expect(configError('http://127.0.0.1:6379')).toMatch(/must be a redis:\/\/ or rediss:\/\/ URL \(got/);
    expect(configError('redis://:6379')).toMatch(/does not parse/);
    expect(configError('redis:///0')).toMatch(/must name a host/);
  });
});
