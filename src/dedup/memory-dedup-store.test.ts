import { dedupStoreContract } from '../../test/contracts/dedup-store-contract.js';
import { ManualClock } from '../testing/manual-clock.js';
import { MemoryDedupStore } from './memory-dedup-store.js';

dedupStoreContract('MemoryDedupStore', () => {
  const clock = new ManualClock();
  return {
    store: () => new MemoryDedupStore(clock),
    unreachable: () => {
      const store = new MemoryDedupStore(clock);
      store.down = true;
      return store;
    },
    elapse: async (ms) => clock.advance(ms),
    shortTtlMs: 1_000,
  };
});
