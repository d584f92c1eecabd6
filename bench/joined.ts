/**
 * The two steps of bench/chain.ts without a chain: two sub-topologies joined by a topic,
 * BENCH_SOURCE → `copy` → BENCH_MID, then BENCH_MID → `copy-again` → BENCH_SINK, in one
 * process (as before chains, when a second step took a topic and a source of its own). The
 * worker creates BENCH_MID with the source's partition count.
 */
import { sink, topology } from 'weir';

const source = process.env['BENCH_SOURCE'];
const middle = process.env['BENCH_MID'];
const target = process.env['BENCH_SINK'];
if (!source || !middle || !target) throw new Error('BENCH_SOURCE, BENCH_MID and BENCH_SINK must be set');

const steps = topology({ applicationId: 'weir-bench' });
steps
  .source(source, { key: 'buffer', value: 'buffer' })
  .process('copy', (record) => record.value)
  .branch({ success: sink(middle) });
steps
  .source(middle, { key: 'buffer', value: 'buffer' })
  .process('copy-again', (record) => record.value)
  .branch({ success: sink(target) });
export default steps;
