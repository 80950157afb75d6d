// Transformer layers written by tools/gen/transformer.py in torch-mlir's form (torch-mlir
// is not available here; see the script): a GPT-2 block, and a BERT layer with batch and
// sequence length both dynamic (torch-mlir's own export of that is wrong: it casts the
// merged B*T dim to ?x1x768; ../shared/inputs/README.md).
//
// The examples are what the script writes.
// RUN: %python %S/../../tools/gen/transformer.py gpt2 | diff - %examples/gpt2_block_dynamic.mlir
// RUN: %python %S/../../tools/gen/transformer.py bert --batch dynamic | diff - %examples/bert_layer_batch_seq_dynamic.mlir
//
// The script's BERT is the real export: with the same arguments (ftuner-run's random
// inputs depend on the signature only) the seq-only variant and the batch-dynamic one at
// B = 1 compute bit-identical results to ../shared/inputs/bert_layer_dynamic.mlir.
// RUN: ftuner-run %examples/bert_layer_dynamic.mlir --shape 0=1x7x768 --output %t.export.npy
// RUN: %python %S/../../tools/gen/transformer.py bert > %t.bert.mlir
// RUN: ftuner-run %t.bert.mlir --shape 0=1x7x768 --output %t.gen.npy
// RUN: ftuner-run %examples/bert_layer_batch_seq_dynamic.mlir --shape 0=1x7x768 --output %t.batch1.npy
// RUN: cmp %t.export.npy %t.gen.npy
// RUN: cmp %t.export.npy %t.batch1.npy
//
// Batch and sequence dynamic, compiled once, against the reference interpreter.
// RUN: ftuner-run %examples/bert_layer_batch_seq_dynamic.mlir --shape 0=3x7x768 --check | FileCheck %s
// RUN: ftuner-run %examples/bert_layer_batch_seq_dynamic.mlir --shape 0=2x20x768 --check | FileCheck %s
// CHECK: result #0: tensor {{3x7|2x20}}x768xf32
// CHECK: check: ok
//
// A mismatched input is an error naming the argument and its type, not a crash.
// RUN: not ftuner-run %examples/bert_layer_batch_seq_dynamic.mlir --shape 0=2x5x700 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: ftuner-run: error: argument #0: shape 2x5x700 does not match tensor<?x?x768xf32>
