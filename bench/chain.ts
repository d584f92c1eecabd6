/**
 * The two-step benchmark topology: BENCH_SOURCE → `copy` → `copy-again` → BENCH_SINK in one
 * task (a chain: the second step takes the first one's output in memory). Next to
 * bench/joined.ts, the same two steps as two sub-topologies joined by a topic.
 */
import { sink, topology } from 'weir';

const source = process.env['BENCH_SOURCE'];
const target = process.env['BENCH_SINK'];
if (!source || !target) throw new Error('BENCH_SOURCE and BENCH_SINK must be set');

export default topology({ applicationId: 'weir-bench' })
  .source(source, { key: 'buffer', value: 'buffer' })
  .process('copy', (record) => record.value)
  // Its input is written with these serdes only into its retry tiers and DLQ (default json).
  .process('copy-again', (record) => record.value, { inputSerdes: 'buffer' })
  .branch({ success: sink(target) });
