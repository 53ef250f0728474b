// A small Google Benchmark suite for `perflab run --gbench` (docs/suites.md): a plain
// benchmark, one with arguments, a template and a fixture. Build it twice, e.g.
//   g++ -O2 -o bench_old bench.cc -lbenchmark -lpthread
//   g++ -O2 -DSUM_PASSES=2 -o bench_new bench.cc -lbenchmark -lpthread
// the second one with a slowdown planted in BM_Sum alone (two passes over its data).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

// SUM_PASSES (or SUM_LENGTH: 4219 for 3% more work) plants a slowdown here alone: numbers in
// the data, not in the code, so that no benchmark's code moves (a loop placed at another
// address can itself run at another speed)
#ifndef SUM_PASSES
#define SUM_PASSES 1
#endif
#ifndef SUM_LENGTH
#define SUM_LENGTH 4096
#endif
static volatile int sum_passes = SUM_PASSES;
static volatile int sum_length = SUM_LENGTH;

static void BM_Sum(benchmark::State& state) {
  std::vector<std::int64_t> data(sum_length);
  std::iota(data.begin(), data.end(), 0);
  for (auto _ : state) {
    std::int64_t total = 0;
    for (int pass = 0; pass < sum_passes; ++pass) {
      benchmark::DoNotOptimize(data.data());
      total += std::accumulate(data.begin(), data.end(), std::int64_t{0});
    }
    benchmark::DoNotOptimize(total);
  }
}
BENCHMARK(BM_Sum);

// the arguments are part of the name: BM_Add/64/512
static void BM_Add(benchmark::State& state) {
  std::vector<float> a(state.range(0) * state.range(1), 1.0f), b(a.size(), 2.0f), c(a.size());
  for (auto _ : state) {
    std::transform(a.begin(), a.end(), b.begin(), c.begin(), [](float x, float y) { return x + y; });
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(c.size()));
}
BENCHMARK(BM_Add)->Args({8, 64})->Args({64, 512});

// a template: BM_Copy<std::string>
template <typename T>
static void BM_Copy(benchmark::State& state) {
  std::vector<T> from(256, T{}), to(256);
  for (auto _ : state) {
    std::copy(from.begin(), from.end(), to.begin());
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK_TEMPLATE(BM_Copy, int);
BENCHMARK_TEMPLATE(BM_Copy, std::string);

// a fixture: Sorted/Search
class Sorted : public benchmark::Fixture {
 public:
  void SetUp(const benchmark::State&) override {
    values.resize(1 << 12);
    std::iota(values.begin(), values.end(), 0);
  }
  std::vector<int> values;
};
BENCHMARK_F(Sorted, Search)(benchmark::State& state) {
  int key = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(std::binary_search(values.begin(), values.end(), key));
    key = (key + 37) & ((1 << 12) - 1);
  }
}

BENCHMARK_MAIN();
