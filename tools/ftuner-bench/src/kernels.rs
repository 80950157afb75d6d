//! The MLIR of W1's and W2's kernels, shared by `ftuner-bench` (CPU) and
//! `ftuner-gpu-bench` (GPU).

/// W1's dense layer `?xK * KxN` (M dynamic), or with M static (a bucket's kernel).
pub fn matmul_src(m: Option<usize>, k: usize, n: usize) -> String {
    let (ms, dim, empty) = match m {
        Some(m) => (m.to_string(), String::new(), String::new()),
        None => (
            "?".to_string(),
            format!("  %m = tensor.dim %a, %c0 : tensor<?x{k}xf32>\n"),
            "%m".to_string(),
        ),
    };
    format!(
        r#"func.func @mm(%a: tensor<{ms}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{ms}x{n}xf32> {{
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
{dim}  %e = tensor.empty({empty}) : tensor<{ms}x{n}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<{ms}x{n}xf32>) -> tensor<{ms}x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{ms}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : tensor<{ms}x{n}xf32>) -> tensor<{ms}x{n}xf32>
  return %r : tensor<{ms}x{n}xf32>
}}"#
    )
}

/// W2's `Q · Kᵀ` over 192 heads, T dynamic (`None`) or static (a bucket's kernel).
pub fn bmm_nt_src(t: Option<usize>) -> String {
    let ts = t.map_or("?".to_string(), |t| t.to_string());
    let (dims, empty) = match t {
        Some(_) => (String::new(), String::new()),
        None => (
            "  %t = tensor.dim %q, %c1 : tensor<192x?x64xf32>\n  %s = tensor.dim %k, %c1 : tensor<192x?x64xf32>\n".to_string(),
            "%t, %s".to_string(),
        ),
    };
    format!(
        r#"func.func @mm(%q: tensor<192x{ts}x64xf32>, %k: tensor<192x{ts}x64xf32>) -> tensor<192x{ts}x{ts}xf32> {{
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
{dims}  %e = tensor.empty({empty}) : tensor<192x{ts}x{ts}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<192x{ts}x{ts}xf32>) -> tensor<192x{ts}x{ts}xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}} ins(%q, %k : tensor<192x{ts}x64xf32>, tensor<192x{ts}x64xf32>) outs(%f : tensor<192x{ts}x{ts}xf32>) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %a = arith.addf %o, %p : f32
    linalg.yield %a : f32
  }} -> tensor<192x{ts}x{ts}xf32>
  return %r : tensor<192x{ts}x{ts}xf32>
}}"#
    )
}
