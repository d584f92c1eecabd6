/** The campaign's schedules: replayable from their seed, and only faults the configuration can have. */
import { describe, expect, it } from 'vitest';
import { configName, describePlan, drawPlan, FAULT_CONFIGS, FAULT_PROFILES, SESSION_TIMEOUT_MS } from './fault-plan.js';

const seeds = Array.from({ length: 200 }, (_, i) => 1 + i * 7_919);

describe('fault schedules', () => {
  it('are the same for the same seed, configuration and profile', () => {
    for (const config of FAULT_CONFIGS) expect(drawPlan(42, config, FAULT_PROFILES.ci)).toEqual(drawPlan(42, config, FAULT_PROFILES.ci));
    expect(describePlan(drawPlan(42, FAULT_CONFIGS[0]!, FAULT_PROFILES.ci))).toMatch(
      /^\[faults\] seed 42 client kafkajs guarantee exactly_once dedup on /,
    );
  });

  it('hold one broker restart and the profile’s number of faults, each a kind the configuration can have', () => {
    expect(FAULT_CONFIGS.map(configName)).toHaveLength(8);
    for (const profile of Object.values(FAULT_PROFILES))
      for (const config of FAULT_CONFIGS)
        for (const seed of seeds) {
          const plan = drawPlan(seed, config, profile);
          const kinds = plan.faults.map((f) => f.fault.kind);
          expect(kinds.length).toBeGreaterThanOrEqual(profile.minFaults);
          expect(kinds.length).toBeLessThanOrEqual(profile.maxFaults);
          expect(kinds.filter((k) => k === 'broker-restart')).toHaveLength(1);
          if (!config.dedup) expect(kinds).not.toContain('redis-restart');
          if (config.client === 'librdkafka') expect(kinds).not.toContain('thread-crash');
          expect(plan.threads).toBe(kinds.includes('thread-crash') ? 2 : 1);
          for (const { fault } of plan.faults) if (fault.kind === 'zombie') expect(fault.stopMs).toBeGreaterThan(SESSION_TIMEOUT_MS);
        }
  });

  it('cover every fault kind across the ci profile’s configurations for most seeds', () => {
    const covering = seeds.filter((seed) => {
      const kinds = new Set(FAULT_CONFIGS.flatMap((c, i) => drawPlan(seed + i, c, FAULT_PROFILES.ci).faults.map((f) => f.fault.kind)));
      return kinds.size === 7;
    });
    expect(covering.length / seeds.length).toBeGreaterThan(0.9);
  });
});
