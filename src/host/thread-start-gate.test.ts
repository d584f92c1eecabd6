import { describe, expect, it } from 'vitest';
import type { GroupDescription } from '../kafka/kafka-admin.js';
import { threadsSettled, type ThreadJoin } from './thread-start-gate.js';

const tp = (partition: number) => ({ topic: 'in', partition });
const member = (memberId: string, partitions: number[]) => ({
  memberId,
  clientId: memberId,
  host: '/127.0.0.1',
  assignment: partitions.map(tp),
});
const group = (state: string, members: ReturnType<typeof member>[]): GroupDescription => ({
  groupId: 'app',
  state,
  protocol: 'range',
  members,
});
const join = (memberId: string, partitions: number[]): ThreadJoin => ({ memberId, assignment: partitions.map(tp) });

describe('threadsSettled: the start gate of stream threads', () => {
  const stable = group('Stable', [member('m1', [0, 1, 2]), member('m2', [3, 4, 5])]);

  it('opens when every thread joined and holds, in a stable group, the assignment it reported', () => {
    expect(threadsSettled([join('m1', [2, 0, 1]), join('m2', [3, 4, 5])], stable)).toBe(true);
  });

  it('waits for a thread that has not joined', () => {
    expect(threadsSettled([join('m1', [0, 1, 2]), undefined], stable)).toBe('threads 2 have not joined yet');
  });

  it('waits while the group rebalances', () => {
    const rebalancing = { ...stable, state: 'PreparingRebalance' };
    expect(threadsSettled([join('m1', [0, 1, 2]), join('m2', [3, 4, 5])], rebalancing)).toBe('the group is PreparingRebalance');
  });

  it('waits for a thread still on an older generation (it reported the assignment of its first join)', () => {
    expect(threadsSettled([join('m1', [0, 1, 2, 3, 4, 5]), join('m2', [3, 4, 5])], stable)).toBe(
      'thread 1 has not seen the latest assignment yet',
    );
  });

  it('waits for a thread whose member is not in the group (its new member id is not described yet)', () => {
    expect(threadsSettled([join('m1', [0, 1, 2]), join('m3', [3, 4, 5])], stable)).toBe("thread 2's member m3 is not in the group");
  });

  it('opens with an idle thread (more threads than partitions) and with members of other processes in the group', () => {
    const shared = group('Stable', [member('m1', [0]), member('m2', []), member('other', [1])]);
    expect(threadsSettled([join('m1', [0]), join('m2', [])], shared)).toBe(true);
  });
});
