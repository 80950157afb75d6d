#!/usr/bin/env bash
# Transfer-tuning experiment (issue 8): tune the source models fully, tune the target model
# fully (the baseline), then transfer the sources' schedules to the target and compare.
#   tools/bench/transfer_tuning.sh [OUT_DIR] [TRIALS]
# Run on a quiet machine: every figure is a ratio measured side by side in one process,
# but a busy machine still widens the noise. Writes OUT_DIR/*.txt, *.jsonl and the
# databases.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/transfer-tuning}
trials=${2:-48}
inputs=${FTUNER_INPUTS:-../shared/inputs}
bin=target/release/ftuner-tune
mkdir -p "$out"
rm -f "$out"/*.db "$out"/*.db-wal "$out"/*.db-shm
# 1. Full search on the source models (dense layer, attention scores) and on the target (BERT).
for m in dense_dynamic bmm_nt_dynamic; do
  $bin tune "$inputs/$m.mlir" --db "$out/source.db" --trials "$trials" --quiet --json "$out/tune-$m.jsonl"
done | tee "$out/tune-source.txt"
$bin tune "$inputs/bert_layer_dynamic.mlir" --db "$out/bert.db" --trials "$trials" --quiet \
  --json "$out/tune-bert.jsonl" | tee "$out/tune-bert.txt"
# 2. Transfer source -> BERT, compared with BERT's full search.
cp "$out/source.db" "$out/source-to-bert.db"
$bin transfer "$inputs/bert_layer_dynamic.mlir" --db "$out/source-to-bert.db" --compare-db "$out/bert.db" \
  --json "$out/transfer-bert.jsonl" | tee "$out/transfer-bert.txt"
# 3. And back: BERT -> the dense layer and the attention scores.
cp "$out/bert.db" "$out/bert-to-source.db"
for m in dense_dynamic bmm_nt_dynamic; do
  $bin transfer "$inputs/$m.mlir" --db "$out/bert-to-source.db" --compare-db "$out/source.db" \
    --json "$out/transfer-$m.jsonl"
done | tee "$out/transfer-source.txt"
