#!/usr/bin/env bash
# Runs the crash test (test/integration/crash-recovery.test.ts) N times in a row on one Kafka
# client, each run with its own WEIR_CRASH_SEED, and stops at the first failure.
#
#   scripts/crash-test-loop.sh kafkajs 20            # seeds 1..20
#   scripts/crash-test-loop.sh librdkafka 20 100     # seeds 100..119
#
# Each run's output goes to .crash-loop/<client>-<seed>.log; a summary line per run (seed,
# passed or failed, seconds) goes to .crash-loop/<client>.summary. docs/guarantees.md records
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
  if [[ $rc -eq 0 ]]; then verdict=passed; else verdict=FAILED; fi
  echo "$(date -u +%FT%TZ) ${client} seed ${seed}: ${verdict} in ${took} s" | tee -a ".crash-loop/${client}.summary"
  [[ $rc -eq 0 ]] || exit 1
done
