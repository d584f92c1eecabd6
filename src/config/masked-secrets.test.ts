import { describe, expect, it } from 'vitest';
import { loadWorkerConfig } from './worker-config.js';
import { maskedSecrets } from './masked-secrets.js';

describe('maskedSecrets', () => {
  it('hides the password of a URL user part and of a password= parameter, also in URLs that do not parse', () => {
    expect(maskedSecrets('redis://user:secretpw@[::1')).toBe('redis://user:***@[::1');
    expect(maskedSecrets('redis://:pw@host:99999')).toBe('redis://:***@host:99999');
    expect(maskedSecrets('redis://h:1/?db=1&password=pw2&x=1')).toBe('redis://h:1/?db=1&password=***&x=1');
    expect(maskedSecrets('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(maskedSecrets('redis://u:my secret@127.0.0.1:abc')).toBe('redis://u:***@127.0.0.1:abc');
    expect(maskedSecrets('redis://u:my\tsecret@127.0.0.1:6379/x')).toBe('redis://u:***@127.0.0.1:6379/x');
    expect(maskedSecrets('redis://h:1/x?password=my secret&db=1')).toBe('redis://h:1/x?password=***&db=1');
    expect(maskedSecrets('redis://u:p@ss@h:6379/cache')).toBe('redis://u:***@h:6379/cache');
    expect(maskedSecrets('redis://h:1/x?password=p@ss')).toBe('redis://h:1/x?password=***');
    expect(maskedSecrets('redis://my user:pw@h:abc')).toBe('redis://my user:***@h:abc');
    expect(maskedSecrets(42)).toBe(42);
  });

  it("keeps a bad --redis-url value's password out of the config error", () => {
    expect(() => loadWorkerConfig({ redisUrl: 'redis://u:secretpw@127.0.0.1:abc' }, {})).toThrow(
      /got "redis:\/\/u:\*\*\*@127\.0\.0\.1:abc"/,
    );
    const env = (() => {
      try {
        loadWorkerConfig({}, { REDIS_URL: 'redis://u:envsecret@:bad' });
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    })();
    expect(env).toMatch(/REDIS_URL.*redis:\/\/u:\*\*\*@:bad/);
  });
});
