/**
 * The integration-librdkafka project runs this file instead of the suite when the optional
 * librdkafka client (`@confluentinc/kafka-javascript`) does not load (vitest.config.ts): one
 * plain line in the report, never a silent pass. Under CI=true it fails.
 */
import { describe, it } from 'vitest';

const problem = process.env['WEIR_LIBRDKAFKA_MISSING'] ?? 'unknown';
const ci = /^(1|true)$/i.test(process.env['CI'] ?? '');

describe('integration suite on librdkafka', () => {
  if (ci)
    it('runs (CI=true needs @confluentinc/kafka-javascript)', () => {
      throw new Error(
        `the librdkafka client does not load, so its integration suite cannot run: ${problem}. See README.md, "The librdkafka client".`,
      );
    });
  else
    it.skip(`DID NOT RUN: @confluentinc/kafka-javascript does not load (${problem}); see README.md, "The librdkafka client"`, () =>
      undefined);
});
