import { describe, expect, it } from 'vitest';
import { ClientMismatchError, ConfigError, GroupInstanceConflictError, MemberFencedError, TopologyError } from '../errors.js';
import { EXIT, exitCodeOf, reportError } from './report-error.js';

describe('exitCodeOf', () => {
  it('exits 2 for bad input, a group.instance.id in use, and a --client the group does not run; 1 for the rest', () => {
    expect(exitCodeOf(new ConfigError('--threads', 'bad'))).toBe(EXIT.usage);
    expect(exitCodeOf(new GroupInstanceConflictError('pod-7'))).toBe(EXIT.usage);
    expect(exitCodeOf(new ClientMismatchError('orders', 'librdkafka', { refusedForMs: 30_000 }))).toBe(EXIT.usage);
    expect(exitCodeOf(new MemberFencedError('pod-7'))).toBe(EXIT.failure);
    expect(exitCodeOf(new Error('broker gone'))).toBe(EXIT.failure);
  });
});

describe('reportError', () => {
  it('prints a client mismatch in one line naming --client, the group and the error code', () => {
    const lines: string[] = [];
    reportError(new ClientMismatchError('orders', 'kafkajs', { refusedForMs: 31_400 }), false, (line) => lines.push(line));
    expect(lines).toEqual([
      "weir: the consumer group 'orders' has members of another Kafka client: the broker refused the joins of this --client kafkajs member for 31 s " +
        "(INCONSISTENT_GROUP_PROTOCOL: their partition assignors differ); start every worker of application.id 'orders' with the same --client (or WEIR_KAFKA_CLIENT) [WEIR_CLIENT_MISMATCH]",
    ]);
  });

  it('puts the code of a message of several lines at the end of its first line, not of its last problem', () => {
    const lines: string[] = [];
    const error = new TopologyError('a', 'first', undefined, [{ node: 'b', problem: 'second' }]);
    reportError(error, false, (line) => lines.push(line));
    expect(lines).toEqual(["weir: 2 problems: [WEIR_TOPOLOGY_INVALID]\n  node 'a': first\n  node 'b': second"]);
  });
});
