#include <cstdio>
#include <cstdlib>
#include <vector>
struct Params { float scale; int n; float bias; int unused[8]; };
static __attribute__((noinline)) float dot(const float* a, const float* b, int n, float scale) {
  float s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s * scale;
}
static __attribute__((noinline)) void saxpy(float* y, const float* x, const Params* p) {
  for (int i = 0; i < p->n; i++) y[i] = p->scale * x[i] + y[i] * 0.5f + p->bias;
}
int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 1000;
  std::vector<float> a(4096, 1.f), b(4096, 2.f);
  Params p{0.5f, 4096, 0.f, {}};
  p.bias = (float)(argc - 2);
  float t = dot(a.data(), b.data(), 16, 2.0f);
  for (int r = 0; r < reps; r++) {
    saxpy(a.data(), b.data(), &p);
    t += dot(a.data(), b.data(), 4096, 1.0f);
  }
  printf("%f\n", t);
  return 0;
}
