/**
 * Probe for hanging transactions across broker crashes (docs/guarantees.md, "Broker crashes and
 * hanging transactions"): a broker instance of its own, two `weir run` workers (exactly_once, no
 * dedup, 6 partitions, `--threads 2` with a stream-thread crash armed now and then), steady
 * input, and a broker SIGKILL + restart every 5–13 s (with worker `b` SIGKILLed every other
 * time). At the end the input is consumed, sink and DLQ are read read_committed, and it prints
 * each input that is there twice and every transaction marker the broker dropped (`Couldn't find
 * leader endpoint … likely deleted already`, from the broker log of each incarnation).
 *
 *   npm run build && npx tsx scripts/hanging-transaction-probe.ts
 *   CLIENT=librdkafka CYCLES=20 COMBINED=1 npx tsx scripts/hanging-transaction-probe.ts
 *
 * Env: CLIENT (kafkajs), CYCLES (10), THREADS (2), SEED (1), COMBINED=1 (one combined
 * controller+broker process instead of a separate controller: the setup that drops markers).
 * Keeps the broker's files (and says where) when it finds a duplicate or an incomplete read.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { seededRandom } from '../src/testing/seeded-random.js';
import { OWN_BROKER_START, createTopicsOnRestartedBroker } from '../test/integration/support/own-broker.js';
import { SCRIPTED_TOPOLOGY } from '../test/integration/support/scripted-scenario.js';
import { ScriptedInput, scriptMessages } from '../test/integration/support/scripted-input.js';
import { brokerFiles, instanceBrokers, type BrokerInstance } from './lib/broker-instance.js';
import { freePort } from './lib/free-port.js';
import { removeBrokerInstance, startBroker, stopBroker } from './lib/kafka-broker.js';
import { endOffsets, produce, quietKafka, readTopics, type ReadRecord } from './lib/topic-io.js';
import { startWorker, type WorkerProcess } from './lib/worker-process.js';

const CLIENT = process.env['CLIENT'] ?? 'kafkajs';
const CYCLES = Number(process.env['CYCLES'] ?? 10);
const THREADS = process.env['THREADS'] ?? '2';
const instance: BrokerInstance = {
  name: `probe-${randomBytes(3).toString('hex')}`,
  port: await freePort(),
  controllerPort: await freePort(),
  separateController: process.env['COMBINED'] !== '1',
};
const files = brokerFiles(instance);
await startBroker({ instance, ...OWN_BROKER_START });
const brokers = instanceBrokers(instance);
console.log(`broker ${brokers} (${instance.separateController ? 'separate controller' : 'combined node'}), files ${files.runtimeDir}`);

/** The broker's "markers dropped" lines of the incarnation that just ended (its log was rotated to .1 on restart). */
const dropped: string[] = [];
const collectDropped = async (log: string): Promise<void> => {
  const text = await readFile(log, 'utf8').catch(() => '');
  for (const line of text.split('\n')) if (line.includes('likely deleted already')) dropped.push(line);
};

const kafka = quietKafka(brokers);
const admin = kafka.admin();
await admin.connect();
const id = `probe-${randomBytes(3).toString('hex')}`;
const topics = { source: `${id}.in`, sink: `${id}.out`, dlq: `${id}.dlq` };
await createTopicsOnRestartedBroker(kafka, [{ topic: topics.source, partitions: 6 }]);
const marker = `${files.runtimeDir}/crashed`;
await writeFile(marker, '');
const input = new ScriptedInput(seededRandom(Number(process.env['SEED'] ?? 1)), THREADS !== '1' ? { crashEvery: 50 } : {});
await produce(kafka, topics.source, scriptMessages(input.next(3_000)));

const workers = new Map<string, WorkerProcess>();
let finished = false;
const start = (name: string): void => {
  const worker = startWorker(SCRIPTED_TOPOLOGY, {
    args: [
      ...['--application-id', id, '--client', CLIENT, '--guarantee', 'exactly_once', '--brokers', brokers, '--threads', THREADS],
      ...['--commit-interval-ms', '100', '--session-timeout-ms', '6000', '--heartbeat-interval-ms', '1000'],
      ...['--transaction-timeout-ms', '10000', '--shutdown-timeout-ms', '20000'],
    ],
    env: { WEIR_TEST_SOURCE: topics.source, WEIR_TEST_SINK: topics.sink, WEIR_TEST_DLQ: topics.dlq, WEIR_TEST_CRASH_MARKER: marker },
  });
  workers.set(name, worker);
  void worker.exited.then((code) => {
    if (!finished && workers.get(name) === worker)
      console.log(`worker ${name} exited on its own (${code}): ${worker.otherOutput.slice(-3).join(' | ')}`);
  });
};
start('a');
start('b');

let brokerDown = false;
let feeding = true;
const feeder = (async () => {
  while (feeding) {
    await sleep(1_000);
    if (brokerDown) continue;
    const ends = await endOffsets(admin, [topics.sink]).catch(() => undefined);
    const written = [...(ends?.get(topics.sink)?.values() ?? [])].reduce((a, b) => a + b, 0);
    if (written > input.messages.length - 3_000)
      await produce(kafka, topics.source, scriptMessages(input.next(1_000))).catch(() => undefined);
  }
})();

await sleep(15_000);
for (let cycle = 0; cycle < CYCLES; cycle++) {
  await sleep(5_000 + Math.random() * 8_000);
  if (THREADS !== '1' && Math.random() < 0.6) {
    await rm(marker, { force: true }); // the next crash record ends its stream thread
    await sleep(500 + Math.random() * 2_500);
  }
  brokerDown = true;
  const began = Date.now();
  await stopBroker({ instance, hard: true });
  if (cycle % 2 === 1) {
    const b = workers.get('b')!;
    workers.delete('b');
    await b.stop('SIGKILL');
    start('b');
  }
  await sleep(Math.random() * 3_000);
  await startBroker({ instance, ...OWN_BROKER_START });
  brokerDown = false;
  await collectDropped(`${files.brokerLog}.1`);
  console.log(`cycle ${cycle}: broker restarted in ${Date.now() - began} ms; markers dropped so far: ${dropped.length}`);
}
feeding = false;
await feeder;

// Drain: until the group committed every input (or stopped moving for 2 min).
let last = -1;
let still = 0;
for (;;) {
  await sleep(3_000);
  const [offsets] = await admin.fetchOffsets({ groupId: id, topics: [topics.source] });
  const committed = (offsets?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  if (committed >= input.messages.length) break;
  still = committed === last ? still + 1 : 0;
  if (still >= 40) {
    console.log(`the group stopped at ${committed} of ${input.messages.length} committed inputs`);
    break;
  }
  last = committed;
}
finished = true;
for (const worker of workers.values()) await worker.stop('SIGTERM');
await collectDropped(files.brokerLog);
const { records, complete } = await readTopics(kafka, [topics.sink, topics.dlq], {
  until: (read) => read.length >= input.messages.length,
  timeoutMs: 90_000,
});
const byInput = new Map<string, ReadRecord[]>();
for (const r of records) {
  const value = JSON.parse(String(r.value)) as { input?: string };
  const key = value.input ?? `${r.headers['weir.original.partition']}@${r.headers['weir.original.offset']}`;
  byInput.set(key, [...(byInput.get(key) ?? []), r]);
}
const twice = [...byInput].filter(([, copies]) => copies.length > 1);
console.log(
  `inputs ${input.messages.length}, read ${records.length} read_committed (complete: ${complete}), inputs twice: ${twice.length}, ` +
    `broker restarts ${CYCLES}, transaction markers dropped by the broker: ${dropped.length}`,
);
for (const [at, copies] of twice.slice(0, 20))
  console.log(`twice: input ${at} at ${copies.map((r) => `${r.topic}:${r.partition}@${r.offset} (producer ${r.producer})`).join(', ')}`);
for (const line of dropped.slice(0, 20)) console.log(`dropped: ${line}`);
await admin.disconnect();
if (twice.length === 0 && complete) await removeBrokerInstance(instance);
else console.log(`kept the broker's files for analysis: ${files.runtimeDir} (remove them with its controller and broker stopped)`);
process.exit(twice.length === 0 && complete ? 0 : 1);
