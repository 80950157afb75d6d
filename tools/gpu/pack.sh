#!/usr/bin/env bash
# Builds here what tools/gpu/check.sh runs on a GPU machine that has no Rust and no LLVM
# (the lent H200s have CUDA and Python but nothing can be installed on them): the GPU
# benchmark and the runtime's integration-test binary (the CUDA driver tests), stripped and
# packed into .gpu/bin.tar.xz (about 31 MB; .gpu is git-ignored). check.sh unpacks them
# when it finds no cargo. LLVM and MLIR are linked statically; what else they load
# (libffi, libzstd, libz) goes along in .gpu's tarball too.
#
#   bash tools/gpu/pack.sh            # then run check.sh there with .gpu carried
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=.gpu
cargo build --release -p ftuner-bench --bin ftuner-gpu-bench
test_exe=$(cargo test --release -p ftuner-runtime --test integration --no-run --message-format=json 2>/dev/null |
    python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "integration":
        print(m["executable"])')
[ -n "$test_exe" ] || { echo "pack: the integration test binary was not built" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$DEST"
cp target/release/ftuner-gpu-bench "$stage/bin/"
cp "$test_exe" "$stage/bin/ftuner-runtime-integration"
strip "$stage"/bin/*
for lib in libffi.so.8 libzstd.so.1 libz.so.1; do
    path=$(ldd "$stage/bin/ftuner-gpu-bench" | awk -v l="$lib" '$1 == l { print $3 }')
    [ -n "$path" ] && cp -L "$path" "$stage/lib/"
done
tar -C "$stage" -cf - bin lib | xz -T0 -6 > "$DEST/bin.tar.xz"
echo "pack: $DEST/bin.tar.xz ($(du -h "$DEST/bin.tar.xz" | cut -f1)); carry .gpu and run: bash tools/gpu/check.sh"
