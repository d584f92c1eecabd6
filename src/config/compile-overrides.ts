import type { CompileOverrides } from '../topology/compile.js';
import { readConfigSettings, type ConfigFlags, type WorkerConfig } from './worker-config.js';

/** The worker settings that override the topology file's own. */
type OverridingSettings = Pick<WorkerConfig, 'applicationId' | 'processingGuarantee' | 'commitIntervalMs'>;

/**
 * What the worker config overrides of the topology file's own settings: `application.id`,
 * `processing.guarantee` and `commit.interval.ms`, where set.
 */
export function compileOverridesOf(config: OverridingSettings): CompileOverrides {
  return {
    ...(config.applicationId ? { applicationId: config.applicationId } : {}),
    ...(config.processingGuarantee ? { processingGuarantee: config.processingGuarantee } : {}),
    ...(config.commitIntervalMs ? { commitIntervalMs: config.commitIntervalMs } : {}),
  };
}

/**
 * The overrides `weir run` would apply, read the way it reads them — `--application-id`,
 * `--guarantee`, `--commit-interval-ms`, over WEIR_APPLICATION_ID, WEIR_PROCESSING_GUARANTEE and
 * WEIR_COMMIT_INTERVAL_MS — so that `weir describe` and `weir validate` show the topology as it
 * would run. No other setting is read.
 *
 * @param flags `applicationId`, `processingGuarantee`, `commitIntervalMs` (commander's names, as strings)
 * @throws ConfigError naming the flag or environment variable that holds a bad value
 */
export function loadCompileOverrides(flags: ConfigFlags, env: Readonly<Record<string, string | undefined>>): CompileOverrides {
  const { settings } = readConfigSettings(['applicationId', 'processingGuarantee', 'commitIntervalMs'], flags, env);
  return compileOverridesOf(settings);
}
