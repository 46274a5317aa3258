// Software binary formats (binary_ops.h, binary_functions.h, BinaryContext) against native float
// and against an MPFR emulation, in one run. Formats: bfloat16, binary16, e4m3fn, binary32.
// Workloads, all on the same values (random words of the format; the native loops read the same
// values as float, which holds every value of these formats exactly):
//   add, mul  4096 elements, c[i] = a[i] op b[i]; inputs uniform in [-4, 4] rounded to the format
//   exp       4096 elements, y[i] = exp(x[i]);    inputs uniform in [-4, 4] rounded to the format
//   matmul    256x256 times 256x256, every inner product a left fold from zero,
//             acc = add(acc, mul(a, b)) (the evaluator's order); inputs uniform in [-1, 1]
// Variants:
//   native        float arithmetic on the same loop (add/mul: auto-vectorized by the compiler;
//                 exp: std::exp on float, glibc expf; matmul: the fold in float, not vectorized
//                 since the summation order is fixed)
//   native_novec  add/mul only: the same float loop with vectorization switched off
//   soft          fp_add / fp_mul / fp_exp on words (exact, nearest-even, flags accumulated)
//   denote_all    matmul only: denote_all over BinaryContext on a one-node matmul graph
//   denote_all_f32  matmul only: the same graph over F32Context (the evaluator's native baseline)
//   mpfr          mpfr_t at the format's precision, mpfr_set_emin/emax set to the format's range
//                 for the run, mpfr_subnormalize after every operation (values stored as mpfr_t)
//   fast          the fast exact formats (binary_fast.h, issue 20): fast_add_n / fast_mul_n on the
//                 word arrays, BinaryContext::exp (a table for formats of <= 16 bits, filled
//                 before timing), fast_matmul; the same words and flags as soft (checked at startup)
//   fast_scalar   add/mul only: fast_add / fast_mul called once per element
//   fast16        add/mul only, formats of <= 16 bits: fast_add_n16 / fast_mul_n16 on packed uint16_t
//                 words (the storage numpy and accelerators use; bfloat16/binary16 nearest-even read
//                 and write 16-bit words in their own kernel); the same words as fast (checked
//                 before timing) and flags
//   fast_avx2     matmul, bfloat16/binary16 only: fast_matmul with the binary32-lane fold at its AVX2
//                 level (fastsimd::set_simd_level(1)); `fast` runs the widest the CPU has
//   fast_lanes    matmul, bfloat16/binary16: fast_matmul in the double lanes (level 0, the fold before
//                 the binary32 lanes); add/mul: fast_add_n / fast_mul_n without the hand-vectorised kernels of
//                 binary_fast_simd.h (bfloat16/binary16 in nearest-even), i.e. the compiler-
//                 vectorised float lanes they replaced (for the other formats: the same as fast)
// One more workload (issue 20): mlp, a 784-256-256-10 ReLU MLP on a batch of 256 through
// denote_all, in bfloat16 (BinaryContext, its fast tensor rules) and in f32 (F32Context); per
// call, and per multiply-add in per_elem.
// Counters: per_elem (time per output element; matmul: per multiply-add) and, for matmul, FLOP/s
// (2 per multiply-add). At startup the variants are checked against each other on the data:
// soft == mpfr bit for bit (add, mul, exp, two matmul rows), soft == native for binary32 add/mul
// and the binary32 matmul fold; a mismatch stops the program. After its run, denote_all's product
// is compared with the plain fold (two rows; a mismatch marks the benchmark as failed).
// bench/formats_compare.sh prints the ratios.
//
//   build-fb/bin/formats_bench --benchmark_filter='add/' --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "denote/base/allocator.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/binary_fast.h"
#include "denote/scalar/binary_functions.h"
#include "denote/scalar/binary_ops.h"
#include "scalar/binary_fast_simd.h"

namespace {

using denote::BinaryFormat;
using denote::FpEnv;
using denote::FpWord;
using denote::Tensor;

constexpr int64_t kElems = 4096;
constexpr int64_t kDim = 256;  // matmul m = k = n
constexpr uint32_t kSeed = 20261130;

// ---- data ----

struct FormatData {
  BinaryFormat fmt;
  std::vector<uint64_t> a, b, x, ma, mb;  // words: add/mul operands, exp argument, matmul operands
  std::vector<float> fa, fb, fx, fma, fmb;  // the same values as float
};

std::vector<uint64_t> random_words(const BinaryFormat& f, std::mt19937& rng, int64_t n, double bound) {
  std::uniform_real_distribution<double> d(-bound, bound);
  FpEnv env;
  std::vector<uint64_t> w(static_cast<size_t>(n));
  for (uint64_t& v : w) v = denote::fp_from_double(f, env, d(rng));
  return w;
}

std::vector<float> as_float(const BinaryFormat& f, const std::vector<uint64_t>& w) {
  std::vector<float> v(w.size());
  for (size_t i = 0; i < w.size(); ++i) v[i] = static_cast<float>(denote::word_to_double(f, w[i]));
  return v;
}

FormatData make_data(const std::string& name) {
  auto f = denote::parse_format(name);
  if (!f.ok()) {
    std::fprintf(stderr, "formats_bench: %s\n", f.message().c_str());
    std::exit(1);
  }
  FormatData d;
  d.fmt = *f;
  std::mt19937 rng(kSeed);
  d.a = random_words(d.fmt, rng, kElems, 4.0);
  d.b = random_words(d.fmt, rng, kElems, 4.0);
  d.x = random_words(d.fmt, rng, kElems, 4.0);
  d.ma = random_words(d.fmt, rng, kDim * kDim, 1.0);
  d.mb = random_words(d.fmt, rng, kDim * kDim, 1.0);
  d.fa = as_float(d.fmt, d.a);
  d.fb = as_float(d.fmt, d.b);
  d.fx = as_float(d.fmt, d.x);
  d.fma = as_float(d.fmt, d.ma);
  d.fmb = as_float(d.fmt, d.mb);
  return d;
}

// ---- MPFR emulation ----

// The format's exponent range for MPFR (significands in [1/2, 1)): the smallest subnormal
// 2^(emin - F) is 2^(mpfr_emin - 1), the largest binade 2^emax is [2^(mpfr_emax - 1), 2^mpfr_emax).
class MpfrRange {
 public:
  explicit MpfrRange(const BinaryFormat& f) : old_emin_(mpfr_get_emin()), old_emax_(mpfr_get_emax()) {
    mpfr_set_emin(f.emin() - f.frac_bits + 1);
    mpfr_set_emax(f.emax() + 1);
  }
  ~MpfrRange() {
    mpfr_set_emin(old_emin_);
    mpfr_set_emax(old_emax_);
  }
  MpfrRange(const MpfrRange&) = delete;
  MpfrRange& operator=(const MpfrRange&) = delete;

 private:
  mpfr_exp_t old_emin_, old_emax_;
};

class MpfrArray {
 public:
  MpfrArray(const BinaryFormat& f, const std::vector<uint64_t>& words) : v_(words.size()) {
    for (size_t i = 0; i < v_.size(); ++i) {
      mpfr_init2(&v_[i], f.precision());
      mpfr_set_d(&v_[i], denote::word_to_double(f, words[i]), MPFR_RNDN);  // exact
    }
  }
  ~MpfrArray() {
    for (__mpfr_struct& x : v_) mpfr_clear(&x);
  }
  MpfrArray(const MpfrArray&) = delete;
  MpfrArray& operator=(const MpfrArray&) = delete;
  mpfr_ptr operator[](size_t i) { return &v_[i]; }

 private:
  std::vector<__mpfr_struct> v_;  // mpfr_t is an array type; its element is the value
};

// One correctly rounded operation in the format's range, as an emulator would do it.
inline void emulate_round(mpfr_ptr r, int ternary) { mpfr_subnormalize(r, ternary, MPFR_RNDN); }

void mpfr_add_all(MpfrArray& c, MpfrArray& a, MpfrArray& b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) emulate_round(c[i], mpfr_add(c[i], a[i], b[i], MPFR_RNDN));
}
void mpfr_mul_all(MpfrArray& c, MpfrArray& a, MpfrArray& b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) emulate_round(c[i], mpfr_mul(c[i], a[i], b[i], MPFR_RNDN));
}
void mpfr_exp_all(MpfrArray& y, MpfrArray& x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) emulate_round(y[i], mpfr_exp(y[i], x[i], MPFR_RNDN));
}

// Rows [0, rows) of the product; acc and prod are scratch variables at the format's precision.
void mpfr_matmul(MpfrArray& c, MpfrArray& a, MpfrArray& b, int64_t rows, mpfr_ptr acc, mpfr_ptr prod) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < kDim; ++j) {
      mpfr_set_zero(acc, 1);
      for (int64_t r = 0; r < kDim; ++r) {
        emulate_round(prod, mpfr_mul(prod, a[i * kDim + r], b[r * kDim + j], MPFR_RNDN));
        emulate_round(acc, mpfr_add(acc, acc, prod, MPFR_RNDN));
      }
      mpfr_set(c[i * kDim + j], acc, MPFR_RNDN);
    }
  }
}

// ---- software formats and native float: the same loops ----

void soft_add(const BinaryFormat& f, FpEnv& env, uint64_t* c, const uint64_t* a, const uint64_t* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = denote::fp_add(f, env, a[i], b[i]);
}
void soft_mul(const BinaryFormat& f, FpEnv& env, uint64_t* c, const uint64_t* a, const uint64_t* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = denote::fp_mul(f, env, a[i], b[i]);
}
void soft_exp(const BinaryFormat& f, FpEnv& env, uint64_t* y, const uint64_t* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = denote::fp_exp(f, env, x[i]);
}
void soft_matmul(const BinaryFormat& f, FpEnv& env, uint64_t* c, const uint64_t* a, const uint64_t* b,
                 int64_t rows) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < kDim; ++j) {
      uint64_t acc = denote::zero_word(f, false);
      for (int64_t r = 0; r < kDim; ++r) {
        acc = denote::fp_add(f, env, acc, denote::fp_mul(f, env, a[i * kDim + r], b[r * kDim + j]));
      }
      c[i * kDim + j] = acc;
    }
  }
}

// ---- fast exact formats ----

const denote::FastFormat& fast_format_of(const BinaryFormat& f) {
  static std::vector<std::unique_ptr<denote::FastFormat>> cache;
  for (const auto& p : cache)
    if (p->format == f) return *p;
  std::optional<denote::FastFormat> ff = denote::FastFormat::of(f);
  if (!ff) {
    std::fprintf(stderr, "formats_bench: %s has no fast path\n", f.name.c_str());
    std::exit(1);
  }
  cache.push_back(std::make_unique<denote::FastFormat>(*ff));
  return *cache.back();
}

void fast_add_all(const BinaryFormat& f, FpEnv& env, uint64_t* c, const uint64_t* a, const uint64_t* b, int64_t n) {
  denote::fast_add_n(fast_format_of(f), env, reinterpret_cast<const FpWord*>(a), reinterpret_cast<const FpWord*>(b),
                     reinterpret_cast<FpWord*>(c), static_cast<size_t>(n));
}
void fast_mul_all(const BinaryFormat& f, FpEnv& env, uint64_t* c, const uint64_t* a, const uint64_t* b, int64_t n) {
  denote::fast_mul_n(fast_format_of(f), env, reinterpret_cast<const FpWord*>(a), reinterpret_cast<const FpWord*>(b),
                     reinterpret_cast<FpWord*>(c), static_cast<size_t>(n));
}
void fast_add_scalar(const BinaryFormat& f, FpEnv& env, uint64_t* c, const uint64_t* a, const uint64_t* b,
                     int64_t n) {
  const denote::FastFormat& ff = fast_format_of(f);
  for (int64_t i = 0; i < n; ++i) c[i] = denote::fast_add(ff, env, a[i], b[i]);
}
void fast_mul_scalar(const BinaryFormat& f, FpEnv& env, uint64_t* c, const uint64_t* a, const uint64_t* b,
                     int64_t n) {
  const denote::FastFormat& ff = fast_format_of(f);
  for (int64_t i = 0; i < n; ++i) c[i] = denote::fast_mul(ff, env, a[i], b[i]);
}
void fast_exp_all(const denote::BinaryContext& ctx, uint64_t* y, const uint64_t* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = ctx.exp(FpWord{x[i]}).bits;
}
void fast_matmul_all(const BinaryFormat& f, FpEnv& env, uint64_t* c, const uint64_t* a, const uint64_t* b,
                     int64_t rows) {
  denote::fast_matmul(fast_format_of(f), env, reinterpret_cast<const FpWord*>(a), reinterpret_cast<const FpWord*>(b),
                      reinterpret_cast<FpWord*>(c), rows, kDim, kDim);
}

void native_add(float* c, const float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
void native_mul(float* c, const float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] * b[i];
}
__attribute__((optimize("no-tree-vectorize"), noinline)) void native_add_novec(float* c, const float* a,
                                                                                const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
__attribute__((optimize("no-tree-vectorize"), noinline)) void native_mul_novec(float* c, const float* a,
                                                                                const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] * b[i];
}
void native_exp(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void native_matmul(float* c, const float* a, const float* b, int64_t rows) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < kDim; ++j) {
      float acc = 0.0f;
      for (int64_t r = 0; r < kDim; ++r) acc = acc + a[i * kDim + r] * b[r * kDim + j];
      c[i * kDim + j] = acc;
    }
  }
}

// ---- the matmul graph for denote_all ----

denote::Model matmul_model() {
  denote::GraphBuilder b;
  const int64_t x = b.input({kDim, kDim});
  const int64_t y = b.input({kDim, kDim});
  const int64_t m = b.binary(denote::Op::Matmul, x, y);
  auto model = b.build({m});
  if (!model.ok()) {
    std::fprintf(stderr, "formats_bench: matmul graph: %s\n", model.message().c_str());
    std::exit(1);
  }
  return std::move(*model);
}

std::vector<FpWord> as_fp_words(const std::vector<uint64_t>& w) {
  std::vector<FpWord> v(w.size());
  for (size_t i = 0; i < w.size(); ++i) v[i] = FpWord{w[i]};
  return v;
}

// ---- benchmarks ----

enum class Work { Add, Mul, Exp, Matmul };

void set_counters(benchmark::State& state, Work work) {
  const double per_call = work == Work::Matmul ? double(kDim * kDim * kDim) : double(kElems);
  // Seconds per element (printed with an SI prefix, e.g. 19.1ns; seconds in the JSON output).
  state.counters["per_elem"] =
      benchmark::Counter(per_call, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  if (work == Work::Matmul)
    state.counters["FLOP/s"] = benchmark::Counter(2 * per_call, benchmark::Counter::kIsIterationInvariantRate);
}

void bm_native(benchmark::State& state, const FormatData* d, Work work, bool vectorized) {
  std::vector<float> out(work == Work::Matmul ? size_t(kDim * kDim) : size_t(kElems));
  auto* const add = vectorized ? native_add : native_add_novec;
  auto* const mul = vectorized ? native_mul : native_mul_novec;
  for (auto _ : state) {
    switch (work) {
      case Work::Add: add(out.data(), d->fa.data(), d->fb.data(), kElems); break;
      case Work::Mul: mul(out.data(), d->fa.data(), d->fb.data(), kElems); break;
      case Work::Exp: native_exp(out.data(), d->fx.data(), kElems); break;
      case Work::Matmul: native_matmul(out.data(), d->fma.data(), d->fmb.data(), kDim); break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, work);
}

void bm_soft(benchmark::State& state, const FormatData* d, Work work) {
  std::vector<uint64_t> out(work == Work::Matmul ? size_t(kDim * kDim) : size_t(kElems));
  FpEnv env;
  const BinaryFormat& f = d->fmt;
  for (auto _ : state) {
    switch (work) {
      case Work::Add: soft_add(f, env, out.data(), d->a.data(), d->b.data(), kElems); break;
      case Work::Mul: soft_mul(f, env, out.data(), d->a.data(), d->b.data(), kElems); break;
      case Work::Exp: soft_exp(f, env, out.data(), d->x.data(), kElems); break;
      case Work::Matmul: soft_matmul(f, env, out.data(), d->ma.data(), d->mb.data(), kDim); break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  if (!env.error.empty()) state.SkipWithError(env.error.c_str());
  set_counters(state, work);
}

// A BinaryContext whose exp has its table (filled here, before timing, for formats <= 16 bits).
denote::BinaryContext warm_context(const BinaryFormat& f, const std::vector<uint64_t>& x) {
  denote::BinaryContext ctx(f);
  for (int i = 0; i < (1 << 14) / kElems + 1; ++i)
    for (uint64_t w : x) (void)ctx.exp(FpWord{w});
  return ctx;
}

void bm_fast(benchmark::State& state, const FormatData* d, Work work, bool bulk, int simd_level) {
  denote::fastsimd::set_simd_level(simd_level);
  std::vector<uint64_t> out(work == Work::Matmul ? size_t(kDim * kDim) : size_t(kElems));
  FpEnv env;
  const BinaryFormat& f = d->fmt;
  const denote::BinaryContext ctx = warm_context(f, work == Work::Exp ? d->x : std::vector<uint64_t>{});
  auto* const add = bulk ? fast_add_all : fast_add_scalar;
  auto* const mul = bulk ? fast_mul_all : fast_mul_scalar;
  for (auto _ : state) {
    switch (work) {
      case Work::Add: add(f, env, out.data(), d->a.data(), d->b.data(), kElems); break;
      case Work::Mul: mul(f, env, out.data(), d->a.data(), d->b.data(), kElems); break;
      case Work::Exp: fast_exp_all(ctx, out.data(), d->x.data(), kElems); break;
      case Work::Matmul: fast_matmul_all(f, env, out.data(), d->ma.data(), d->mb.data(), kDim); break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  denote::fastsimd::set_simd_level(-1);
  if (!env.error.empty()) state.SkipWithError(env.error.c_str());
  set_counters(state, work);
}

// Packed words: a and b narrowed to uint16_t once; the result is checked against fast_add_n /
// fast_mul_n on the 64-bit words (checked against soft at startup) before timing.
void bm_fast16(benchmark::State& state, const FormatData* d, Work work) {
  const denote::FastFormat& ff = fast_format_of(d->fmt);
  std::vector<uint16_t> a(d->a.begin(), d->a.end()), b(d->b.begin(), d->b.end()), out(a.size());
  auto* const op = work == Work::Add ? denote::fast_add_n16 : denote::fast_mul_n16;
  FpEnv env, wide_env;
  std::vector<uint64_t> wide(d->a.size());
  (work == Work::Add ? fast_add_all : fast_mul_all)(d->fmt, wide_env, wide.data(), d->a.data(), d->b.data(), kElems);
  if (!op(ff, env, a.data(), b.data(), out.data(), a.size()) || !std::equal(out.begin(), out.end(), wide.begin()) ||
      env.flags != wide_env.flags) {
    state.SkipWithError("fast16 differs from fast");
    return;
  }
  for (auto _ : state) {
    op(ff, env, a.data(), b.data(), out.data(), a.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  if (!env.error.empty()) state.SkipWithError(env.error.c_str());
  set_counters(state, work);
}

void bm_mpfr(benchmark::State& state, const FormatData* d, Work work) {
  MpfrRange range(d->fmt);
  const bool mm = work == Work::Matmul;
  MpfrArray a(d->fmt, mm ? d->ma : (work == Work::Exp ? d->x : d->a));
  MpfrArray b(d->fmt, mm ? d->mb : d->b);
  MpfrArray c(d->fmt, mm ? d->ma : d->a);  // output, overwritten
  mpfr_t acc, prod;
  mpfr_inits2(d->fmt.precision(), acc, prod, static_cast<mpfr_ptr>(nullptr));
  for (auto _ : state) {
    switch (work) {
      case Work::Add: mpfr_add_all(c, a, b, kElems); break;
      case Work::Mul: mpfr_mul_all(c, a, b, kElems); break;
      case Work::Exp: mpfr_exp_all(c, a, kElems); break;
      case Work::Matmul: mpfr_matmul(c, a, b, kDim, acc, prod); break;
    }
    benchmark::ClobberMemory();
  }
  mpfr_clears(acc, prod, static_cast<mpfr_ptr>(nullptr));
  set_counters(state, work);
}

// Times one denote_all of `model` per iteration; the last iteration's final value, or nullopt after
// an evaluation error (the benchmark is then skipped with it).
template <class Ctx, class S>
std::optional<std::vector<S>> time_denote_all(benchmark::State& state, const denote::Model& model,
                                              const denote::Payload<S>& payload, const std::vector<Tensor<S>>& inputs,
                                              Ctx& ctx) {
  std::vector<S> last;
  for (auto _ : state) {
    auto table = denote::denote_all(model.graph, payload, std::span<const Tensor<S>>(inputs), ctx);
    if (!table.ok()) {
      state.SkipWithError(table.message().c_str());
      return std::nullopt;
    }
    benchmark::DoNotOptimize(table.value().data());
    benchmark::ClobberMemory();
    last = std::move(table.value().back().data);
  }
  return last;
}

// denote_all over BinaryContext (or F32Context) on the matmul graph; the inputs are prepared once.
template <class Ctx>
void bm_denote_all(benchmark::State& state, const FormatData* d) {
  using S = typename Ctx::Scalar;
  static const denote::Model model = matmul_model();
  std::vector<Tensor<S>> inputs;
  const denote::Shape shape{kDim, kDim};
  Ctx ctx = [&] {
    if constexpr (std::is_same_v<Ctx, denote::BinaryContext>) {
      inputs.push_back(Tensor<S>(shape, as_fp_words(d->ma)));
      inputs.push_back(Tensor<S>(shape, as_fp_words(d->mb)));
      return Ctx(d->fmt);
    } else {
      inputs.push_back(Tensor<S>(shape, d->fma));
      inputs.push_back(Tensor<S>(shape, d->fmb));
      return Ctx();
    }
  }();
  const denote::Payload<S> payload;
  const std::optional<std::vector<S>> last = time_denote_all(state, model, payload, inputs, ctx);  // the product
  if (!last) return;
  set_counters(state, Work::Matmul);
  if constexpr (std::is_same_v<Ctx, denote::BinaryContext>) {  // the same words as the plain fold
    FpEnv env;
    std::vector<uint64_t> fold(kDim * kDim);
    soft_matmul(d->fmt, env, fold.data(), d->ma.data(), d->mb.data(), 2);
    for (int64_t i = 0; i < 2 * kDim; ++i) {
      if (last->at(static_cast<size_t>(i)).bits != fold[static_cast<size_t>(i)]) {
        state.SkipWithError("denote_all and the plain fold disagree");
        return;
      }
    }
  }
}

// ---- the MNIST-sized MLP (issue 20): 784-256-256-10, ReLU, batch 256 ----

constexpr int64_t kBatch = 256;
constexpr int64_t kMlpDims[] = {784, 256, 256, 10};

denote::Model mlp_model() {
  std::mt19937 rng(kSeed + 1);
  denote::GraphBuilder b;
  int64_t h = b.input({kBatch, kMlpDims[0]});
  for (int l = 0; l < 3; ++l) {
    const int64_t in = kMlpDims[l], out = kMlpDims[l + 1];
    std::uniform_real_distribution<double> u(-1.0 / std::sqrt(double(in)), 1.0 / std::sqrt(double(in)));
    std::vector<double> w(static_cast<size_t>(in * out)), bias(static_cast<size_t>(out));
    for (double& v : w) v = u(rng);
    for (double& v : bias) v = u(rng);
    h = b.linear(h, out, std::move(w), std::move(bias));
    if (l < 2) h = b.unary(denote::Op::Relu, h);
  }
  auto model = b.build({h});
  if (!model.ok()) {
    std::fprintf(stderr, "formats_bench: mlp graph: %s\n", model.message().c_str());
    std::exit(1);
  }
  return std::move(*model);
}

// denote_all of the MLP in bfloat16 (BinaryContext) or f32 (F32Context); input pixels in [0, 1].
template <class Ctx>
void bm_mlp(benchmark::State& state) {
  using S = typename Ctx::Scalar;
  static const denote::Model model = mlp_model();
  Ctx ctx = [] {
    if constexpr (std::is_same_v<Ctx, denote::BinaryContext>)
      return Ctx(*denote::parse_format("bfloat16"));
    else
      return Ctx();
  }();
  auto to_s = [&](double v) -> S {
    if constexpr (std::is_same_v<Ctx, denote::BinaryContext>)
      return ctx.from_double(v);
    else
      return static_cast<S>(v);
  };
  const denote::Payload<S> payload = denote::convert_payload<S>(model.payload, to_s);
  std::mt19937 rng(kSeed + 2);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<S> x(static_cast<size_t>(kBatch * kMlpDims[0]));
  for (S& v : x) v = to_s(u(rng));
  std::vector<Tensor<S>> inputs{Tensor<S>({kBatch, kMlpDims[0]}, std::move(x))};
  if (!time_denote_all(state, model, payload, inputs, ctx)) return;
  const double macs = double(kBatch) * (784 * 256 + 256 * 256 + 256 * 10);
  state.counters["per_elem"] =
      benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// ---- startup cross-checks ----

[[noreturn]] void mismatch(const FormatData& d, const char* what, size_t i) {
  std::fprintf(stderr, "formats_bench: %s: %s disagrees at element %zu\n", d.fmt.name.c_str(), what, i);
  std::exit(1);
}

void check_vs_mpfr(const FormatData& d, const char* what, const std::vector<uint64_t>& soft, MpfrArray& m,
                   size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (mpfr_get_d(m[i], MPFR_RNDN) != denote::word_to_double(d.fmt, soft[i])) mismatch(d, what, i);
  }
}

void check_vs_native(const FormatData& d, const char* what, const std::vector<uint64_t>& soft,
                     const std::vector<float>& native, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<double>(native[i]) != denote::word_to_double(d.fmt, soft[i])) mismatch(d, what, i);
  }
}

// soft against MPFR (add, mul, exp, two matmul rows); against native float for binary32.
void cross_check(const FormatData& d) {
  const BinaryFormat& f = d.fmt;
  FpEnv env;
  MpfrRange range(f);
  std::vector<uint64_t> sadd(kElems), smul(kElems), sexp(kElems), smm(kDim * kDim);
  soft_add(f, env, sadd.data(), d.a.data(), d.b.data(), kElems);
  soft_mul(f, env, smul.data(), d.a.data(), d.b.data(), kElems);
  soft_exp(f, env, sexp.data(), d.x.data(), kElems);
  soft_matmul(f, env, smm.data(), d.ma.data(), d.mb.data(), 2);
  MpfrArray a(f, d.a), b(f, d.b), x(f, d.x), c(f, d.a), ma(f, d.ma), mb(f, d.mb), mc(f, d.ma);
  mpfr_add_all(c, a, b, kElems);
  check_vs_mpfr(d, "add soft/mpfr", sadd, c, kElems);
  mpfr_mul_all(c, a, b, kElems);
  check_vs_mpfr(d, "mul soft/mpfr", smul, c, kElems);
  mpfr_exp_all(c, x, kElems);
  check_vs_mpfr(d, "exp soft/mpfr", sexp, c, kElems);
  mpfr_t acc, prod;
  mpfr_inits2(f.precision(), acc, prod, static_cast<mpfr_ptr>(nullptr));
  mpfr_matmul(mc, ma, mb, 2, acc, prod);
  mpfr_clears(acc, prod, static_cast<mpfr_ptr>(nullptr));
  check_vs_mpfr(d, "matmul soft/mpfr", smm, mc, 2 * kDim);
  {  // fast == soft, words and flags
    FpEnv fe;
    std::vector<uint64_t> fadd(kElems), fmul(kElems), fexp(kElems), fmm(kDim * kDim);
    fast_add_all(f, fe, fadd.data(), d.a.data(), d.b.data(), kElems);
    fast_mul_all(f, fe, fmul.data(), d.a.data(), d.b.data(), kElems);
    const denote::BinaryContext ctx = warm_context(f, d.x);
    fast_exp_all(ctx, fexp.data(), d.x.data(), kElems);
    fast_matmul_all(f, fe, fmm.data(), d.ma.data(), d.mb.data(), 2);
    for (size_t i = 0; i < size_t(kElems); ++i) {
      if (fadd[i] != sadd[i]) mismatch(d, "add fast/soft", i);
      if (fmul[i] != smul[i]) mismatch(d, "mul fast/soft", i);
      if (fexp[i] != sexp[i]) mismatch(d, "exp fast/soft", i);
    }
    for (size_t i = 0; i < size_t(2 * kDim); ++i)
      if (fmm[i] != smm[i]) mismatch(d, "matmul fast/soft", i);
    if ((fe.flags | ctx.flags()) != env.flags) mismatch(d, "flags fast/soft", 0);
  }
  if (f.name == "binary32") {
    std::vector<float> nadd(kElems), nmul(kElems), nmm(kDim * kDim);
    native_add(nadd.data(), d.fa.data(), d.fb.data(), kElems);
    native_mul(nmul.data(), d.fa.data(), d.fb.data(), kElems);
    native_matmul(nmm.data(), d.fma.data(), d.fmb.data(), 2);
    check_vs_native(d, "add soft/native", sadd, nadd, kElems);
    check_vs_native(d, "mul soft/native", smul, nmul, kElems);
    check_vs_native(d, "matmul soft/native", smm, nmm, 2 * kDim);
  }
  if (!env.error.empty()) {
    std::fprintf(stderr, "formats_bench: %s: %s\n", f.name.c_str(), env.error.c_str());
    std::exit(1);
  }
}

// Registers one benchmark, timed in real (wall-clock) time.
template <class... Args>
void register_one(const std::string& name, benchmark::TimeUnit unit, Args&&... args) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<Args>(args)...)->Unit(unit)->UseRealTime();
}

void register_all(const FormatData& d) {
  const std::string& n = d.fmt.name;
  const std::pair<Work, const char*> elementwise[] = {{Work::Add, "add"}, {Work::Mul, "mul"}, {Work::Exp, "exp"}};
  for (const auto& [work, op] : elementwise) {
    const std::string p = std::string(op) + "/" + n + "/";
    register_one(p + "native", benchmark::kMicrosecond, bm_native, &d, work, true);
    if (work != Work::Exp) register_one(p + "native_novec", benchmark::kMicrosecond, bm_native, &d, work, false);
    register_one(p + "soft", benchmark::kMicrosecond, bm_soft, &d, work);
    register_one(p + "fast", benchmark::kMicrosecond, bm_fast, &d, work, true, -1);
    if (work != Work::Exp) register_one(p + "fast_scalar", benchmark::kMicrosecond, bm_fast, &d, work, false, -1);
    if (work != Work::Exp) register_one(p + "fast_lanes", benchmark::kMicrosecond, bm_fast, &d, work, true, 0);
    if (work != Work::Exp && d.fmt.storage_bits() <= 16)
      register_one(p + "fast16", benchmark::kMicrosecond, bm_fast16, &d, work);
    register_one(p + "mpfr", benchmark::kMicrosecond, bm_mpfr, &d, work);
  }
  const std::string p = "matmul/" + n + "/";
  register_one(p + "native", benchmark::kMillisecond, bm_native, &d, Work::Matmul, true);
  register_one(p + "soft", benchmark::kMillisecond, bm_soft, &d, Work::Matmul);
  register_one(p + "fast", benchmark::kMillisecond, bm_fast, &d, Work::Matmul, true, -1);
  if (d.fmt.storage_bits() == 16) {  // bfloat16/binary16: the binary32-lane folds at each kernel level
    register_one(p + "fast_avx2", benchmark::kMillisecond, bm_fast, &d, Work::Matmul, true, 1);
    register_one(p + "fast_lanes", benchmark::kMillisecond, bm_fast, &d, Work::Matmul, true, 0);
  }
  register_one(p + "denote_all", benchmark::kMillisecond, bm_denote_all<denote::BinaryContext>, &d);
  register_one(p + "denote_all_f32", benchmark::kMillisecond, bm_denote_all<denote::F32Context>, &d);
  register_one(p + "mpfr", benchmark::kMillisecond, bm_mpfr, &d, Work::Matmul);
}

}  // namespace

int main(int argc, char** argv) {
  denote::tune_allocator_for_throughput();  // include/denote/base/allocator.h
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const std::vector<FormatData> data = {make_data("bfloat16"), make_data("binary16"), make_data("e4m3fn"),
                                               make_data("binary32")};
  for (const FormatData& d : data) cross_check(d);
  for (const FormatData& d : data) register_all(d);
  register_one("mlp/bfloat16/denote_all", benchmark::kMillisecond, bm_mlp<denote::BinaryContext>);
  register_one("mlp/f32/denote_all", benchmark::kMillisecond, bm_mlp<denote::F32Context>);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
