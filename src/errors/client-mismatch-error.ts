// The consumer group holds members of another Kafka client: the broker refuses this one.
import { WeirError } from './weir-error.js';

/** Options of a {@link ClientMismatchError}. */
export interface ClientMismatchErrorOptions {
  /** The client's own error (the broker's `INCONSISTENT_GROUP_PROTOCOL`, code 23). */
  readonly cause?: unknown;
  /**
   * True for one refusal: the group's other members may be crashed workers of the other client
   * whose sessions have not timed out yet, so the member joins again. False (the default) once
   * the refusals lasted a session timeout: live members of the other client hold the group.
   */
  readonly retriable?: boolean;
  /** How long the refusals lasted, ms (a final error). */
  readonly refusedForMs?: number;
}

/**
 * The group coordinator refused this worker's join with `INCONSISTENT_GROUP_PROTOCOL`: the
 * consumer group `application.id` has members whose partition assignors this worker's Kafka
 * client does not share — workers started with the other `--client` (kafkajs and librdkafka
 * name their assignors differently). The worker exits 2 once the refusals have lasted a session
 * timeout (see {@link ClientMismatchErrorOptions.retriable}).
 */
export class ClientMismatchError extends WeirError {
  readonly groupId: string;
  /** This worker's client (`--client`). */
  readonly client: string;
  /** See {@link ClientMismatchErrorOptions.retriable}. */
  readonly retriable: boolean;

  constructor(groupId: string, client: string, options: ClientMismatchErrorOptions = {}) {
    const retriable = options.retriable ?? false;
    const refused =
      options.refusedForMs === undefined
        ? `refuses the join of this --client ${client} member`
        : `refused the joins of this --client ${client} member for ${Math.round(options.refusedForMs / 1000)} s`;
    super(
      'WEIR_CLIENT_MISMATCH',
      `the consumer group '${groupId}' has members of another Kafka client: the broker ${refused} ` +
        `(INCONSISTENT_GROUP_PROTOCOL: their partition assignors differ); ` +
        (retriable
          ? 'joining again, in case they are crashed workers whose sessions have not timed out yet'
          : `start every worker of application.id '${groupId}' with the same --client (or WEIR_KAFKA_CLIENT)`),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.groupId = groupId;
    this.client = client;
    this.retriable = retriable;
  }
}
