import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import type { GroupDescription } from '../kafka/kafka-admin.js';
import { commonConfig } from './librdkafka-config.js';
import { ERR, codeOf } from './librdkafka-errors.js';
import { LIBRDKAFKA_PACKAGE, type LibrdkafkaConfig, type NativeGroupDescription } from './librdkafka-native.js';
import type { NativeClients } from './librdkafka-native-clients.js';

/**
 * The script the helper process runs: one AdminClient, one `describeGroups`, the answer as
 * JSON on stdout (`{ groups }` or `{ error }`), then exit. Its input comes in the environment
 * (`WEIR_DESCRIBE_GROUPS`, JSON), so nothing is quoted into the code.
 */
const SCRIPT = `
const input = JSON.parse(process.env.WEIR_DESCRIBE_GROUPS);
const { AdminClient } = require(input.modulePath);
const admin = AdminClient.create(input.config);
admin.describeGroups(input.groupIds, { timeout: input.timeoutMs }, (err, result) => {
  const answer = err
    ? { error: { message: String(err.message), code: typeof err.code === 'number' ? err.code : undefined } }
    : { groups: result.groups };
  process.stdout.write(JSON.stringify(answer), () => {
    admin.disconnect();
    process.exit(0);
  });
});
`;

/** How many times {@link describeGroupInHelper} runs its helper when the helper crashes. */
const DESCRIBE_ATTEMPTS = 3;
/** The pause between those tries, ms: a group coordinator that loads answers within a second or two. */
const DESCRIBE_RETRY_MS = 1_000;

/** librdkafka's consumer group states (`ConsumerGroupStates`) as Kafka names them. */
const GROUP_STATES = ['Unknown', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead', 'Empty'] as const;

/** What the parent waits for beyond the request's own timeout: the helper's start and exit, ms. */
const HELPER_SLACK_MS = 10_000;

/** An answer the helper could not give: it crashed, timed out, or printed no JSON. */
export class DescribeGroupsHelperError extends Error {
  /** The binding's error code when the binding itself answered with an error. */
  readonly code: number | undefined;

  constructor(message: string, code?: number) {
    super(message);
    this.name = 'DescribeGroupsHelperError';
    this.code = code;
  }
}

/**
 * librdkafka's `DescribeGroups`, run in a short-lived helper process. The binding
 * (`@confluentinc/kafka-javascript` up to 1.10 at least) converts a group description that
 * carries an error — the group coordinator loading or not available, a request that timed out
 * — by calling `strlen` on its NULL partition assignor, and the whole process dies of SIGSEGV
 * (confluent-kafka-javascript issue #531, open). A crash in the helper costs the helper only:
 * it is reported as a {@link DescribeGroupsHelperError} the caller can retry. The helper takes
 * about 150 ms (start, connect, one request); weir describes a group once per member id
 * lookup and per `weir status`, never per record.
 *
 * @param config the client configuration (bootstrap servers, client id, timeouts)
 * @param groupIds the groups to describe
 * @param timeoutMs the request's timeout, ms
 * @returns the binding's descriptions, one per group, in order (a group may carry `error`)
 * @throws DescribeGroupsHelperError when the binding answers with an error (its `code`), or
 *   the helper crashes, times out or answers no JSON
 */
export async function describeGroupsIsolated(
  config: LibrdkafkaConfig,
  groupIds: readonly string[],
  timeoutMs: number,
): Promise<NativeGroupDescription[]> {
  const modulePath = createRequire(import.meta.url).resolve(LIBRDKAFKA_PACKAGE);
  const input = JSON.stringify({ modulePath, config, groupIds, timeoutMs });
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', SCRIPT],
      { env: { ...process.env, WEIR_DESCRIBE_GROUPS: input }, timeout: timeoutMs + HELPER_SLACK_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, out, err) => {
        if (error === null) return resolve(out);
        const how = error.signal ? `was killed by ${error.signal}` : `exited with code ${String(error.code)}`;
        const why =
          error.signal === 'SIGSEGV'
            ? ' (a group description with an error: confluent-kafka-javascript issue #531)'
            : err.trim()
              ? `: ${err.trim().split('\n').slice(-3).join(' ')}`
              : '';
        reject(new DescribeGroupsHelperError(`describeGroups ${JSON.stringify(groupIds)}: the helper process ${how}${why}`));
      },
    );
  });
  let answer: { groups?: NativeGroupDescription[]; error?: { message: string; code?: number } };
  try {
    answer = JSON.parse(stdout) as typeof answer;
  } catch {
    throw new DescribeGroupsHelperError(`describeGroups ${JSON.stringify(groupIds)}: the helper process answered no JSON`);
  }
  if (answer.error !== undefined) throw new DescribeGroupsHelperError(answer.error.message, answer.error.code);
  return answer.groups ?? [];
}

/**
 * One group's description through {@link describeGroupsIsolated}, tried up to
 * {@link DESCRIBE_ATTEMPTS} times {@link DESCRIBE_RETRY_MS} apart when the helper crashes (a
 * group coordinator that loads answers within a second or two). A group that does not exist is
 * `Dead` with no members. Needs no connected client: the helper connects on its own.
 *
 * @param timeoutMs the request's timeout, ms
 * @throws the binding's error (its `code`), or DescribeGroupsHelperError when every try crashed
 */
export async function describeGroupInHelper(clients: NativeClients, groupId: string, timeoutMs: number): Promise<GroupDescription> {
  const [group] = await describeWithRetries(clients, [groupId], timeoutMs);
  const dead: GroupDescription = { groupId, state: 'Dead', protocol: '', members: [] };
  if (group === undefined) return dead;
  if (group.error !== undefined) {
    if (codeOf(group.error) === ERR.GROUP_ID_NOT_FOUND) return dead;
    throw group.error;
  }
  return {
    groupId,
    state: GROUP_STATES[group.state] ?? 'Unknown',
    protocol: group.protocol ?? group.partitionAssignor ?? '',
    members: group.members.map((m) => ({
      memberId: m.memberId,
      ...(m.groupInstanceId ? { groupInstanceId: m.groupInstanceId } : {}),
      clientId: m.clientId,
      host: m.clientHost,
      assignment: (m.assignment?.topicPartitions ?? []).map((tp) => ({ topic: tp.topic, partition: tp.partition })),
    })),
  };
}

async function describeWithRetries(clients: NativeClients, groupIds: string[], timeoutMs: number): Promise<NativeGroupDescription[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const groups = await describeGroupsIsolated(commonConfig(clients.options), groupIds, timeoutMs);
      clients.router.heard();
      return groups;
    } catch (error) {
      // The binding's own error (its code set) is the answer; a crashed helper is tried again.
      const crashed = error instanceof DescribeGroupsHelperError && error.code === undefined;
      if (!crashed || attempt >= DESCRIBE_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, DESCRIBE_RETRY_MS));
    }
  }
}
