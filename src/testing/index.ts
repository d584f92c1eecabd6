/**
 * `weir/testing`: property-test topologies without a broker. A {@link TopologyTestDriver}
 * runs a topology through the worker's own PartitionTask code on an in-memory Kafka, an
 * in-memory dedup store and a virtual clock, with fault injection; `arbitraries` generate
 * inputs, failure plans, retry policies and fault schedules for fast-check; `invariants`
 * check what must hold. See docs/testing.md.
 *
 * @example
 * import fc from 'fast-check';
 * import { TopologyTestDriver, arbitraries, invariants, propertyRuns } from 'weir/testing';
 * await fc.assert(fc.asyncProperty(arbitraries.testInputs(), async (inputs) => {
 *   const driver = new TopologyTestDriver(myTopology);
 *   await driver.pipeInput('orders', inputs);
 *   await driver.drain();
 *   invariants.conservation(driver);
 * }), { numRuns: propertyRuns() });
 */
export { TopologyTestDriver } from './topology-test-driver.js';
export type { TopologyTestDriverOptions } from './topology-test-driver-options.js';
export type { DriverTaskStatus } from './task-scheduler.js';
export type { NextStep } from './driver-task.js';
export type { DriverHistory, DriverRecordEvent, DriverFlushEvent, DriverPortErrorEvent, DriverRestart } from './driver-history.js';
export { ManualClock } from './manual-clock.js';
export { InMemoryKafka } from './in-memory-kafka.js';
export type { BrokerOperation, BrokerFaultHook } from './in-memory-kafka.js';
export { MemoryDedupStore } from '../dedup/memory-dedup-store.js';
export { TEST_INPUT_HEADER } from './test-records.js';
export type { TestInput, PipedInput, TestOutput, DeadLetter } from './test-records.js';
export { FAULT_POINTS, describeFault } from './fault-schedule.js';
export type { Fault, FaultPoint, FaultSchedule } from './fault-schedule.js';
export { InjectedBrokerError } from './fault-injector.js';
export type { FiredFault } from './fault-injector.js';
export { applyFailurePlan, plannedProcessor, expectedOutcome, PlannedFailure, PlannedNonRetriableFailure } from './failure-plan.js';
export { plannedChainStep, expectedChainOutcome, type ChainPlannedValue, type ExpectedChainOutcome } from './chain-plan.js';
export type { AttemptResult, FailurePlan, PlannedValue, PlannedResult, ExpectedOutcome } from './failure-plan.js';
export { arbitraries } from './arbitraries.js';
export type {
  GeneratedInput,
  TestInputsOptions,
  FailurePlanOptions,
  PlannedInputsOptions,
  RetryOptionsArbitraryOptions,
  FaultScheduleOptions,
} from './arbitraries.js';
export { invariants } from './invariants.js';
export type { AllInvariantsOptions } from './invariants.js';
export type { ConservationOptions } from './delivery-invariants.js';
export { InvariantViolation } from './invariant-violation.js';
export type { InvariantName } from './invariant-violation.js';
export { RunIndex } from './input-outcomes.js';
export type { InputOutcome } from './input-outcomes.js';
export { seededRandom } from './seeded-random.js';
export { propertyRuns, PROPERTY_RUNS_ENV } from './property-runs.js';
