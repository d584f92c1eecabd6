import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { DEFAULT_TOPOLOGY_LOAD_TIMEOUT_MS, TOPOLOGY_LOAD_TIMEOUT_ENV } from '../host/load-topology.js';

const timeoutMs = z.coerce.number().int().min(100).max(3_600_000);

/**
 * How long `weir validate`, `describe` and `status` wait for a topology file to load, ms: the
 * environment's `WEIR_TOPOLOGY_LOAD_TIMEOUT_MS`, else 60 000. (`weir run` waits as long as the
 * file takes: a stop signal ends it.)
 *
 * @throws ConfigError naming the variable when it is not a whole number from 100 to 3 600 000
 */
export function topologyLoadTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[TOPOLOGY_LOAD_TIMEOUT_ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_TOPOLOGY_LOAD_TIMEOUT_MS;
  const parsed = timeoutMs.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError(TOPOLOGY_LOAD_TIMEOUT_ENV, `must be a whole number of ms from 100 to 3600000 (got ${JSON.stringify(raw)})`);
  return parsed.data;
}
