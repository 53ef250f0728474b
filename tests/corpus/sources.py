"""The corpus's programs: small, real C/C++ code in the shapes the issue met in the wild."""

# A helper of ~3 instructions (lea + ret), inlined or not: the call overhead is as large as it.
INLINE_SMALL = r"""
#include <stdlib.h>
#ifndef HELPER
#define HELPER static inline
#endif
HELPER int helper(int x) { return 3 * x + 1; }
__attribute__((noinline)) int kernel(const int *v, int n) {
  int t = 0;
  for (int i = 0; i < n; i++) t += helper(v[i]);
  return t;
}
int buf[4096];
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 1500;
  volatile int r = 0;
  for (int k = 0; k < reps; k++) { buf[k & 4095] = k; r += kernel(buf, 4096); }
  return r == 12345;
}
"""

# A helper of ~50 instructions (a hash mix), forced inline or kept out of line.
INLINE_LARGE = r"""
#include <stdlib.h>
#ifndef HELPER
#define HELPER static inline __attribute__((always_inline))
#endif
HELPER unsigned mix(unsigned x, unsigned k) {
  x ^= k; x *= 0x9e3779b1u; x ^= x >> 15; x *= 0x85ebca6bu; x ^= x >> 13;
  x *= 0xc2b2ae35u; x ^= x >> 16; x += k * 7u; x ^= x << 5; x *= 0x27d4eb2du;
  x ^= x >> 11; x += 0x165667b1u; x ^= x << 9; x *= 0x61c88647u; x ^= x >> 7;
  x += k ^ 0x5bd1e995u; x ^= x >> 3; x *= 0x1b873593u; x ^= x << 13; x ^= x >> 17;
  x *= 0xcc9e2d51u; x ^= x >> 12; x += k << 2; x ^= x >> 5; x *= 0x2545f491u;
  return x ^ (x >> 16);
}
__attribute__((noinline)) unsigned hash_all(const unsigned *v, int n, unsigned k) {
  unsigned h = 0;
  for (int i = 0; i < n; i++) h += mix(v[i], k + (unsigned)i);
  return h;
}
unsigned buf[2048];
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 300;
  volatile unsigned r = 0;
  for (int k = 0; k < reps; k++) {
    buf[k & 2047] = (unsigned)k;
    r += hash_all(buf, 2048, (unsigned)k);
  }
  return r == 12345u;
}
"""

# A rare slow path, inlined into the hot loop or outlined to a cold function.
SLOW_PATH = r"""
#include <stdlib.h>
#ifdef OUTLINE
#define SLOW __attribute__((noinline, cold))
#else
#define SLOW static inline __attribute__((always_inline))
#endif
SLOW int slow_path(const int *v, int i) {
  int s = 0;
  for (int j = 0; j < 16; j++) s += v[(i + j) & 4095] * (j + 1);
  return s;
}
__attribute__((noinline)) int process(const int *v, int n) {
  int t = 0;
  for (int i = 0; i < n; i++) {
    if (__builtin_expect(v[i] < 0, 0)) t += slow_path(v, i);
    else t += v[i] >> 1;
  }
  return t;
}
int buf[4096];
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 1500;
  for (int i = 0; i < 4096; i++) buf[i] = (i % 64 == 0) ? -i : i;
  volatile int r = 0;
  for (int k = 0; k < reps; k++) r += process(buf, 4096);
  return r == 12345;
}
"""

# gcc -O2 clones: `scale.constprop.0` (always called with k = 3), `classify.part.0` (partial
# inlining of an early-return test, two callers), `weigh.isra.0` once `weigh` is kept out of line
# (a struct passed by pointer, one field used); `fail` is a cold function. (gcc 12 made no `.cold`
# part of these without profile feedback: the statement cases have libpython's `.cold` parts.)
# The A/B changes whether `weigh` is inlined; the other clones are in both builds.
CLONES = r"""
#include <stdio.h>
#include <stdlib.h>
#ifndef WEIGH
#define WEIGH static inline __attribute__((always_inline))
#endif
struct item { int pad[15]; int weight; };
WEIGH int weigh(const struct item *it, int x) { return it->weight * x + (x >> 3); }
static __attribute__((noinline)) int scale(int x, int k) { return x * k + (x >> 2) - k; }
static int classify(int x, const int *t) {
  if (__builtin_expect(x >= 0, 1)) return x & 7;
  int s = 0;
  for (int j = 0; j < 40; j++) s += (x ^ t[j]) * j + (s >> 3);
  for (int j = 0; j < 40; j++) s ^= t[(s + j) & 63] << (j & 7);
  return s;
}
int table[64];
__attribute__((cold, noinline, noreturn)) void fail(int v, int i, int n) {
  fprintf(stderr, "bad value %d at %d of %d\n", v, i, n);
  abort();
}
__attribute__((noinline)) int report(const int *v, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) {
    if (__builtin_expect(v[i] == -123456, 0)) {
      fprintf(stderr, "about to fail\n");
      fail(v[i], i, n);
    }
    s += v[i];
  }
  return s;
}
struct item items[256];
int vals[4096];
__attribute__((noinline)) int total(int n) {
  int t = 0;
  for (int i = 0; i < n; i++) t += weigh(&items[i & 255], i) + scale(i, 3) + classify(i - 8, table);
  return t + report(vals, n);
}
__attribute__((noinline)) int other(int n) { return classify(n, table) + classify(n - 100, table); }
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 600;
  for (int i = 0; i < 256; i++) items[i].weight = i;
  volatile int r = 0;
  for (int k = 0; k < reps; k++) r += total(4096) + other(k);
  return r == 12345;
}
"""

# A C++ non-static member slow path that forwards `this` (the dispatcher mock's shape).
CXX_MEMBER = r"""
#include <cstdlib>
#ifndef SLOW
#define SLOW inline __attribute__((always_inline))
#endif
struct KernelFunction {
  int calls = 0;
  int table[64] = {};
  int slowPath(int k);
  int call(int k);
};
SLOW int KernelFunction::slowPath(int k) {
  calls += 1;
  int s = 0;
  for (int j = 0; j < 24; j++) s += table[(k + j) & 63] ^ (calls + j);
  return s;
}
__attribute__((noinline)) int KernelFunction::call(int k) {
  if (__builtin_expect((k & 15) == 0, 0)) return slowPath(k);
  int s = k;
  for (int j = 0; j < 8; j++) s += table[(k + 3 * j) & 63] * (j + 1);
  return s;
}
int main(int argc, char **argv) {
  int reps = argc > 1 ? std::atoi(argv[1]) : 1000000;
  KernelFunction f;
  for (int i = 0; i < 64; i++) f.table[i] = i * 7;
  volatile int r = 0;
  for (int k = 0; k < reps; k++) r += f.call(k);
  return r == 12345;
}
"""

# One loop: scalar at -O2 (gcc 12's very cheap cost model leaves an unknown trip count alone),
# vectorised at -O3; its width follows the target (-msse2 / -mavx2 / -mavx512f).
SAXPY = r"""
#include <stdlib.h>
__attribute__((noinline)) void saxpy(float *restrict y, const float *restrict x, float a, int n) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
float xs[4096], ys[4096];
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 4000;
  int n = 4000 + (argc > 2);
  for (int i = 0; i < 4096; i++) xs[i] = (float)i;
  for (int k = 0; k < reps; k++) saxpy(ys, xs, 1e-6f, n);
  return ys[7] == 12345.f;
}
"""

# The same call site calling a function under another name (identical body).
RENAMED = r"""
#include <stdlib.h>
#ifndef CALLEE
#define CALLEE compute_v1
#endif
__attribute__((noinline)) int CALLEE(const int *v, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += v[i] * (i & 3);
  return s;
}
__attribute__((noinline)) int driver(int *v, int n, int reps) {
  int t = 0;
  for (int k = 0; k < reps; k++) {
    v[k & 4095] += 1;
    t += CALLEE(v, n);
  }
  return t;
}
int buf[4096];
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 2500;
  for (int i = 0; i < 4096; i++) buf[i] = i;
  volatile int r = driver(buf, 4096, reps);
  return r == 12345;
}
"""

# A shared library (loaded with ctypes) that picks one of two compiled versions of `sum_ints`
# at load time, GNU ifunc style: its resolver reads CORPUS_ISA.
IFUNC_LIB = r"""
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) int sum_ints_sse2(const int *v, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += v[i] * (i | 1);
  return s;
}
__attribute__((noinline, target("avx2"))) int sum_ints_avx2(const int *v, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += v[i] * (i | 1);
  return s;
}
static void *resolve_sum_ints(void) {
  const char *isa = getenv("CORPUS_ISA");
  return isa && strcmp(isa, "avx2") == 0 ? (void *)sum_ints_avx2 : (void *)sum_ints_sse2;
}
int sum_ints(const int *v, int n) __attribute__((ifunc("resolve_sum_ints")));
int data[8192];
int run(int reps) {
  int t = 0;
  for (int k = 0; k < reps; k++) { data[k & 8191] = k; t += sum_ints(data, 8192); }
  return t;
}
"""

# gcc's function multi-versioning: every build has all clones; the CPU picks one at load time.
TARGET_CLONES_LIB = r"""
#ifndef CLONES
#define CLONES "avx2", "default"
#endif
__attribute__((target_clones(CLONES))) int dot(const int *a, const int *b, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
int xs[8192], ys[8192];
int run(int reps) {
  int t = 0;
  for (int k = 0; k < reps; k++) { xs[k & 8191] = k; t += dot(xs, ys, 8192); }
  return t;
}
"""

# One Rust function built under two flag sets and two `-C metadata` (as cargo gives builds with
# different flags): legacy mangling ends each build's symbol in another hash.
SUMBENCH_RS = r"""
use std::env;

#[inline(never)]
fn sum_slice(v: &[u32], n: usize) -> u32 {
    let mut s = 0u32;
    for x in &v[..n] {
        s = s.wrapping_add(*x);
    }
    s
}

fn main() {
    let reps: usize = env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(40000);
    let v: Vec<u32> = (0..4096u32).collect();
    let mut t = 0u32;
    for _ in 0..reps {
        t = t.wrapping_add(sum_slice(std::hint::black_box(&v), std::hint::black_box(4000)));
    }
    std::process::exit((t == 12345) as i32);
}
"""
