/**
 * The benchmark topology: copies every record unchanged (buffer serdes, so no parsing) from
 * BENCH_SOURCE to BENCH_SINK. BENCH_DEDUP=1 adds Redis dedup keyed by the record key.
 */
import { sink, topology, type ProcessOptions } from 'weir';

const source = process.env['BENCH_SOURCE'];
const target = process.env['BENCH_SINK'];
if (!source || !target) throw new Error('BENCH_SOURCE and BENCH_SINK must be set');

const options: ProcessOptions =
  process.env['BENCH_DEDUP'] === '1' ? { dedup: { key: (record) => String(record.key), ttlMs: 3_600_000, store: 'redis' } } : {};

export default topology({ applicationId: 'weir-bench' })
  .source(source, { key: 'buffer', value: 'buffer' })
  .process('copy', (record) => record.value, options)
  .branch({ success: sink(target) });
