#!/usr/bin/env bash
# Runs the crash test (test/integration/crash-recovery.test.ts) N times in a row on one Kafka
# client, each run with its own WEIR_CRASH_SEED. A failed run is recorded with the assertion that
# failed (a delivery violation names the duplicated or missing ids; a run that did not consume
# its input within the test's bound says "input NOT consumed in time"); with STOP_ON_FAILURE=1
# the loop stops there.
#
#   scripts/crash-test-loop.sh kafkajs 20            # seeds 1..20
#   STOP_ON_FAILURE=1 scripts/crash-test-loop.sh kafkajs 20
#   scripts/crash-test-loop.sh librdkafka 20 100     # seeds 100..119
#
# Each run's output goes to .crash-loop/<client>-<seed>.log; a summary line per run (seed,
# passed or failed and why, seconds) goes to .crash-loop/<client>.summary. docs/guarantees.md records
# the seeds of the runs behind its claims. Needs a built dist/ (npm run build).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
client="${1:?usage: crash-test-loop.sh kafkajs|librdkafka RUNS [FIRST_SEED]}"
runs="${2:?usage: crash-test-loop.sh kafkajs|librdkafka RUNS [FIRST_SEED]}"
first="${3:-1}"
mkdir -p .crash-loop
for ((i = 0; i < runs; i++)); do
  seed=$((first + i))
  log=".crash-loop/${client}-${seed}.log"
  started=$(date +%s)
  WEIR_CRASH_SEED="$seed" npx vitest run --project "integration-${client}" test/integration/crash-recovery.test.ts >"$log" 2>&1
  rc=$?
  took=$(($(date +%s) - started))
  if [[ $rc -eq 0 ]]; then
    verdict=passed
  else
    what=$(grep -m1 -o 'input NOT consumed in time\|AssertionError: .*' "$log" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-160)
    verdict="FAILED (${what:-see the log})"
  fi
  echo "$(date -u +%FT%TZ) ${client} seed ${seed}: ${verdict} in ${took} s" | tee -a ".crash-loop/${client}.summary"
  [[ $rc -eq 0 || "${STOP_ON_FAILURE:-0}" != 1 ]] || exit 1
done
