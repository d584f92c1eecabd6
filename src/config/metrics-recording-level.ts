/** The recording levels `--metrics-recording-level` takes, lower case. */
export const METRICS_RECORDING_LEVELS = ['info', 'debug'] as const;
/**
 * Kafka Streams' `metrics.recording.level` (its `INFO` and `DEBUG`; either case is taken, and there
 * is no `TRACE`): `info` records every metric but the per-attempt histogram
 * `weir_process_duration_seconds`, which `debug` adds (Kafka Streams records its task-level
 * `process-latency` at DEBUG too). That histogram is observed once per record: without it a worker
 * used 0.90× the CPU per record at 100 B records (bench/README.md, "The recording level").
 */
export type MetricsRecordingLevel = (typeof METRICS_RECORDING_LEVELS)[number];
