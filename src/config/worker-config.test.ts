import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { loadWorkerConfig } from './worker-config.js';

function configError(flags: Record<string, string>, env: Record<string, string> = {}): ConfigError {
  try {
    loadWorkerConfig(flags, env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadWorkerConfig', () => {
  it('has defaults for a local broker and Redis', () => {
    expect(loadWorkerConfig({}, {})).toMatchObject({
      brokers: ['127.0.0.1:9092'],
      redisUrl: 'redis://127.0.0.1:6379',
      logLevel: 'info',
      sessionTimeoutMs: 30_000,
      heartbeatIntervalMs: 3_000,
      shutdownTimeoutMs: 10_000,
      threads: 1,
    });
    expect(loadWorkerConfig({ threads: '4' }, { WEIR_THREADS: '2' }).threads).toBe(4);
    expect(loadWorkerConfig({}, { WEIR_THREADS: '2' }).threads).toBe(2);
    expect(loadWorkerConfig({}, {}).client).toBe('kafkajs');
    expect(loadWorkerConfig({}, { WEIR_KAFKA_CLIENT: 'librdkafka' }).client).toBe('librdkafka');
    expect(loadWorkerConfig({}, {}).metricsRecordingLevel).toBe('info');
    expect(loadWorkerConfig({}, { WEIR_METRICS_RECORDING_LEVEL: 'debug' }).metricsRecordingLevel).toBe('debug');
    expect(loadWorkerConfig({ metricsRecordingLevel: 'info' }, { WEIR_METRICS_RECORDING_LEVEL: 'debug' }).metricsRecordingLevel).toBe(
      'info',
    );
    // Kafka Streams' spelling.
    expect(loadWorkerConfig({ metricsRecordingLevel: 'DEBUG' }, {}).metricsRecordingLevel).toBe('debug');
  });

  it('gives the librdkafka member its group.instance.id, and runs librdkafka in one stream thread per process', () => {
    const env = { WEIR_KAFKA_CLIENT: 'librdkafka' };
    expect(loadWorkerConfig({ groupInstanceIds: 'pod-7' }, env).groupInstanceIds).toEqual(['pod-7']);
    expect(loadWorkerConfig({}, env).groupInstanceIds).toBeUndefined();
    // The binding's native module loads in one thread of a process only.
    expect(() => loadWorkerConfig({ groupInstanceIds: 'pod-7', threads: '3' }, env)).toThrow(
      /invalid config '--threads': librdkafka runs one stream thread per process/,
    );
    expect(() => loadWorkerConfig({}, { ...env, WEIR_THREADS: '2', WEIR_GROUP_INSTANCE_ID: 'a, b' })).toThrow(/'WEIR_THREADS'/);
  });

  it('asks the client feature table, and names the flag, the client and what to do instead', () => {
    expect(configError({ client: 'librdkafka', threads: '3' }).message).toBe(
      "invalid config '--threads': librdkafka runs one stream thread per process (its native module loads in one thread only): " +
        'run 3 processes instead, each with its own --group-instance-id, or stream threads on --client kafkajs',
    );
    expect(configError({ groupInstanceIds: 'pod-7' }).message).toBe(
      "invalid config '--group-instance-id': static membership needs --client librdkafka (kafkajs has no group.instance.id)",
    );
    expect(configError({}, { WEIR_KAFKA_CLIENT: 'kafkajs', WEIR_GROUP_INSTANCE_ID: 'pod-7' }).key).toBe('WEIR_GROUP_INSTANCE_ID');
    // What the table allows passes: stream threads on kafkajs, static membership on librdkafka.
    expect(loadWorkerConfig({ client: 'kafkajs', threads: '3' }, {}).threads).toBe(3);
    expect(loadWorkerConfig({ client: 'librdkafka', groupInstanceIds: 'pod-7' }, {}).groupInstanceIds).toEqual(['pod-7']);
  });

  it('reads the environment, and flags win over it', () => {
    const c = loadWorkerConfig(
      { logLevel: 'debug' },
      { KAFKA_BROKERS: 'a:1, b:2', REDIS_URL: 'rediss://r:6380', WEIR_LOG_LEVEL: 'warn', WEIR_SESSION_TIMEOUT_MS: '6000' },
    );
    expect(c).toMatchObject({
      brokers: ['a:1', 'b:2'],
      redisUrl: 'rediss://r:6380',
      logLevel: 'debug',
      sessionTimeoutMs: 6000,
      heartbeatIntervalMs: 2000,
    });
    expect(loadWorkerConfig({}, { LOG_LEVEL: 'error' }).logLevel).toBe('error');
  });

  it.each([
    [{}, { KAFKA_BROKERS: 'localhost' }, 'KAFKA_BROKERS', /host:port/],
    [{ brokers: ' , ' }, {}, '--brokers', /at least one broker/],
    [{ brokers: '127.0.0.1:99999' }, {}, '--brokers', /at most 65535/],
    [{ maxRecordBytes: '10' }, {}, '--max-record-bytes', /1024/],
    [{}, { REDIS_URL: 'http://x' }, 'REDIS_URL', /redis:\/\//],
    [{ logLevel: 'loud' }, {}, '--log-level', /"loud"/],
    [{}, { WEIR_SESSION_TIMEOUT_MS: '1000' }, 'WEIR_SESSION_TIMEOUT_MS', /6000/],
    [{ processingGuarantee: 'once' }, {}, '--guarantee', /once/],
    [{ topicPartitions: '0' }, {}, '--partitions', /0/],
    [{ applicationId: 'a b' }, {}, '--application-id', /letters/],
    [{ metricsPort: 'ninety' }, {}, '--metrics-port', /"ninety"/],
    [{ metricsHost: 'my host' }, {}, '--metrics-host', /IP address or a host name/],
    [{}, { WEIR_METRICS_HOST: '-x' }, 'WEIR_METRICS_HOST', /IP address or a host name/],
    [{ metricsRecordingLevel: 'trace' }, {}, '--metrics-recording-level', /must be one of info, debug \(got "trace"\)/],
    [{}, { WEIR_METRICS_RECORDING_LEVEL: 'TRACE' }, 'WEIR_METRICS_RECORDING_LEVEL', /"TRACE"/],
    [{ metricsRecordingLevel: '' }, {}, '--metrics-recording-level', /must be one of info, debug/],
    [{ heartbeatIntervalMs: '40000' }, {}, '--heartbeat-interval-ms', /less than the session timeout/],
    [{ stuckTaskMs: '5' }, {}, '--stuck-task-ms', /1000/],
    [{}, { WEIR_EVENT_LOOP_STALL_MS: 'soon' }, 'WEIR_EVENT_LOOP_STALL_MS', /"soon"/],
    [{ threads: '0' }, {}, '--threads', /"0"/],
    [{ threads: '-2' }, {}, '--threads', /"-2"/],
    [{ threads: 'two' }, {}, '--threads', /"two"/],
    [{ threads: '1.5' }, {}, '--threads', /"1.5"/],
    [{ threads: '0x2' }, {}, '--threads', /decimal digits.*"0x2"/],
    [{ threads: ' 2' }, {}, '--threads', /decimal digits/],
    [{ threads: '1e0' }, {}, '--threads', /decimal digits/],
    [{ threads: '257' }, {}, '--threads', /256/],
    [{ client: 'rdkafka' }, {}, '--client', /kafkajs, librdkafka/],
    [{}, { WEIR_KAFKA_CLIENT: 'java' }, 'WEIR_KAFKA_CLIENT', /kafkajs, librdkafka/],
    [{ client: 'librdkafka', groupInstanceIds: '' }, {}, '--group-instance-id', /empty/],
    [{ client: 'librdkafka', groupInstanceIds: 'a,,b' }, {}, '--group-instance-id', /empty/],
    [{ client: 'librdkafka' }, { WEIR_GROUP_INSTANCE_ID: '' }, 'WEIR_GROUP_INSTANCE_ID', /must not be empty/],
    [{ client: 'librdkafka', groupInstanceIds: 'pod 7' }, {}, '--group-instance-id', /letters/],
    [{ client: 'librdkafka', groupInstanceIds: 'a,a' }, {}, '--group-instance-id', /repeat/],
    [{ client: 'librdkafka', groupInstanceIds: 'a,b' }, {}, '--group-instance-id', /2 ids for 1/],
    [{ groupInstanceIds: 'pod-7' }, {}, '--group-instance-id', /--client librdkafka/],
  ])('names the bad key: %j %j', (flags, env, key, message) => {
    const e = configError(flags, env);
    expect(e.key).toBe(key);
    expect(e.message).toContain(`'${key}'`);
    expect(e.message).toMatch(message);
  });

  it('takes an IP address or host name for the metrics server', () => {
    expect(loadWorkerConfig({ metricsHost: '127.0.0.1', metricsPort: '9464' }, {}).metricsHost).toBe('127.0.0.1');
    expect(loadWorkerConfig({}, { WEIR_METRICS_HOST: '::1', WEIR_METRICS_PORT: '0' }).metricsHost).toBe('::1');
    expect(loadWorkerConfig({ metricsHost: 'metrics.local', metricsPort: '9464' }, {}).metricsHost).toBe('metrics.local');
    expect(loadWorkerConfig({}, {}).metricsHost).toBeUndefined();
    expect(configError({ metricsHost: '127.0.0.1' }).message).toBe(
      `invalid config '--metrics-host': needs --metrics-port (or WEIR_METRICS_PORT): without a port no metrics server runs`,
    );
  });

  it('words every problem in its own terms, never as raw zod text, and reports them all at once', () => {
    expect(configError({ threads: '0' }).message).toBe(`invalid config '--threads': must be at least 1 (got "0")`);
    expect(configError({ metricsPort: '99999' }).message).toBe(`invalid config '--metrics-port': must be at most 65535 (got "99999")`);
    expect(configError({ processingGuarantee: 'maybe' }).message).toBe(
      `invalid config '--guarantee': must be one of at_least_once, exactly_once (got "maybe")`,
    );
    expect(configError({ logLevel: 'loud' }).message).toBe(
      `invalid config '--log-level': must be one of fatal, error, warn, info, debug, trace, silent (got "loud")`,
    );
    const all = configError({ threads: '0', metricsPort: '99999' }, { WEIR_SESSION_TIMEOUT_MS: '1000' });
    expect(all.message.split('; ')).toEqual([
      `invalid config 'WEIR_SESSION_TIMEOUT_MS': must be at least 6000 (got "1000")`,
      `invalid config '--metrics-port': must be at most 65535 (got "99999")`,
      `invalid config '--threads': must be at least 1 (got "0")`,
    ]);
    expect(all.message).not.toMatch(/Too (small|big)|expected|Invalid option/);
    expect(configError({ transactionTimeoutMs: '99999999999999999999' }).message).toBe(
      `invalid config '--transaction-timeout-ms': must be at most 900000 (got "99999999999999999999")`,
    );
  });
});
