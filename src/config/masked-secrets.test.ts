import { describe, expect, it } from 'vitest';
import { loadWorkerConfig } from './worker-config.js';
import { maskedSecrets } from './masked-secrets.js';

describe('maskedSecrets', () => {
  it('hides the password of a URL with a host, as the URL parser reads it, and a password= parameter', () => {
    expect(maskedSecrets('redis://h:1/?db=1&password=pw2&x=1')).toBe('redis://h:1/?db=1&password=***&x=1');
    expect(maskedSecrets('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(maskedSecrets('redis://u:my\tsecret@127.0.0.1:6379/x')).toBe('redis://u:***@127.0.0.1:6379/x');
    expect(maskedSecrets('redis://h:1/x?password=my secret&db=1')).toBe('redis://h:1/x?password=***&db=1');
    expect(maskedSecrets('redis://u:p@ss@h:6379/cache')).toBe('redis://u:***@h:6379/cache');
    expect(maskedSecrets('redis://us@er:SECRET@h/cache')).toBe('redis://us%40er:***@h/cache');
    expect(maskedSecrets('redis://h:1/x?password=p@ss')).toBe('redis://h:1/x?password=***');
    expect(maskedSecrets(42)).toBe(42);
  });

  it('hides all between the scheme and the last @ in what does not parse as a URL with a host', () => {
    for (const value of [
      'redis://user:secretpw@[::1',
      'redis://:secretpw@host:99999',
      'redis://u:my secretpw@127.0.0.1:abc',
      'redis://my user:secretpw@h:abc',
      'redis://u:abc/def+secretpw==@cache.internal:6379/0',
      'redis://u:se#cretpw@h',
      'redis://u:se?cretpw@h',
      'redis:u:secretpw@h',
      'redis://u:123/abcsecretpw@h',
    ]) {
      const shown = maskedSecrets(value) as string;
      expect(shown, value).not.toMatch(/cretpw|secret/);
      expect(shown, value).toMatch(/^redis:(\/\/)?\*\*\*@/);
    }
  });

  it('cuts a long value', () => {
    expect(maskedSecrets('x'.repeat(100_000))).toBe(`${'x'.repeat(300)}…`);
  });

  it("keeps a bad --redis-url value's password out of the config error", () => {
    expect(() => loadWorkerConfig({ redisUrl: 'redis://u:secretpw@127.0.0.1:abc' }, {})).toThrow(/got "redis:\/\/\*\*\*@127\.0\.0\.1:abc"/);
    const env = (() => {
      try {
        loadWorkerConfig({}, { REDIS_URL: 'redis://u:envsecret@:bad' });
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    })();
    expect(env).toMatch(/REDIS_URL.*redis:\/\/\*\*\*@:bad/);
    expect(env).not.toContain('envsecret');
  });
});
