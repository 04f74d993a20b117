// Step 15: the exact sum, rounded once.
//
// What it shows: a float is m x 2^e, so a float sum is an integer count of 2^-149 and fits a fixed-point
// accumulator (a superaccumulator, after Kulisch: exact_acc.hpp). Integer addition is associative, so
// the result cannot depend on the order: not on the grid, the block size, the GPU or the number of GPUs.
// Two levels of double sums keep the cost near step 10's, on data of any scale:
//
// The window (data of one scale). Floats with biased exponents in [W - kBand, W] are multiples of
// 2^(W - kBand - 150) below 2^(W - 126); a sum of at most 2^11 of them needs kBand + 24 + 11 = 53 bits,
// so every double addition of them is exact, in any grouping. Each thread checks its round of 16 floats
// against its band (three instructions a float) and adds them in one double; every 2^11 floats the warp
// moves its 32 doubles into the block's accumulator (three 32-bit digits each, summed by shuffles).
//
// The adaptation (data that leaves the band now and then). A round with a float outside the band tries,
// at most kAdapts times per window, two cheap repairs before the bins: when one or two floats are
// outside, they go into the block's accumulator one by one and the rest into the window (a rare
// outlier, or the tail of the data's scale); when more are, and the round's nonzero floats span fewer
// than kBand binades, the band moves to hold them, once a window (data of one scale elsewhere: the
// window moves once and stays). That is for a few lanes of a warp: where more than kRepairLanes lanes
// leave their band, the whole warp's round goes to the bins, so that no warp runs the window, the
// repairs and the bins one after another (data of many scales, such as lognormal).
//
// The bins (data of many scales). Any other round adds each float to the thread's bin for its band of
// 16 binades (exponent >> 4), with no branch: 16 doubles a thread in shared memory, each exact for 2^14
// floats (39 + 14 = 53 bits). NaN and the infinities land in band 15's bin and make it NaN or an
// infinity, as IEEE's sum of them would; the flush counts them apart. While rounds keep many scales the
// next round goes straight to the bins. Every 2^10 rounds and at the end, the block adds its bins up
// exactly (each bin split into a high and a low part, so that sums of up to 2^11 parts stay within 53
// bits) and moves the 32 sums into its accumulator.
//
// The end of a launch: each warp's last windows go into its own shared slot and warp 0 adds the slots
// up; the block adds its accumulator to the scratch Acc with 64-bit atomics, all words at once (each
// limb but the top one split in two 32-bit parts, so no thread walks the carries); the last block to
// finish (a counter) takes the total, zeroes the scratch (both counters) for the next launch, and rounds once (launch)
// or writes the normalized Acc (accumulate), on one thread with everything in registers.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "agent.cuh"
#include "exact.cuh"

namespace step15 {

namespace {

using Vec4 = reduce::agent::Vec<float>;           // 4 floats, one 128-bit load
constexpr int kLoadsInFlight = 4;                 // 16-byte loads per thread per round, as step 10
constexpr int kRoundFloats = 4 * kLoadsInFlight;  // 16 floats per thread per round
constexpr int kBand = 18;                         // exponents W - kBand .. W share the window
constexpr int kWindowRounds = 128;                // 128 x 16 = 2^11 floats per window: kBand + 11 + 24 = 53
constexpr int kAdapts = 4;                        // band moves and outlier rounds per window (atomics)
constexpr int kRepairLanes = 2;                   // lanes of a warp repaired alone (adapt); more: the warp bins
// The bins: per thread one double per band of 16 binades (band = biased exponent >> 4), in shared
// memory. A float of band b is a multiple of 2^(16b - 150) below 2^(16b - 111): 39 bits of those units,
// so a bin adds 2^14 of them exactly (39 + 14 = 53). A round puts at most 16 floats into one bin, so the
// block empties its bins into its Acc every 2^10 rounds.
constexpr int kBands = 16;
constexpr int kBinRounds = 1 << 10;
// A round adds below 2^47 to a shared limb (1024 threads x 32 digits below 2^32 at most), so normalizing
// every 2^12 rounds keeps the block's limbs below 2^60.
constexpr int kNormalizeRounds = 1 << 12;
static_assert(kRoundFloats * kBinRounds <= (1 << 14) && kNormalizeRounds % kBinRounds == 0,
              "a bin's sum must be exact");
constexpr std::int64_t kMaxGrid = std::int64_t{1} << 20;  // the scratch Acc sums this many normalized Accs

static_assert(kRoundFloats * kWindowRounds <= (1 << 11) && kBand + 11 + 24 <= 53,
              "a window's sum must be exact in double");

// The block's accumulator in shared memory: kLimbs limbs, then the NaN, +inf and -inf counts, as
// unsigned words so that 64-bit atomicAdd wraps like two's complement (a negative digit is added as is).
using Words = unsigned long long;

// The Acc word that counts NaN, +inf or -inf.
__device__ int special_word(bool nan, bool negative) { return nan ? kLimbs : (negative ? kLimbs + 2 : kLimbs + 1); }

// Adds x exactly, one float (the unaligned ends, and a round's outliers): Acc's digits or counts,
// atomically.
__device__ void add_exact(Words* acc, float x) {
  const std::uint32_t u = __float_as_uint(x);
  const int e = (u >> 23) & 0xff;
  const long long f = u & 0x7fffff;
  if (e == 0xff) {
    atomicAdd(&acc[special_word(f != 0, u >> 31)], 1ull);
    return;
  }
  if (e == 0 && f == 0) return;
  const long long m = e ? (f | 0x800000) : f;
  const int s = e ? e - 1 : 0;
  const long long v = (m << (s % 32)) * (u >> 31 ? -1 : 1);
  atomicAdd(&acc[s / 32], static_cast<Words>(v & 0xffffffffLL));
  if (v >> 32) atomicAdd(&acc[s / 32 + 1], static_cast<Words>(v >> 32));
}

// A window's or a bin total's sum d, a multiple of 2^-149 below 2^160 in magnitude, as three
// signed digits: d = sum digit[j] * 2^(32 (k + j) - 149); k = -1 for zero.
struct Digits {
  int k = -1;
  long long digit[3] = {0, 0, 0};
};
struct Slot {  // the same, plain, for shared memory
  int k;
  long long digit[3];
};
__device__ Digits digits_of(double d) {
  Digits g;
  if (d == 0.0) return g;
  const unsigned long long b = __double_as_longlong(d);
  unsigned long long m = (b & ((1ull << 52) - 1)) | (1ull << 52);  // |d| = m * 2^(s - 149)
  int s = static_cast<int>((b >> 52) & 0x7ff) - 1075 + 149;
  if (s < 0) {  // the bits shifted out are zero: d is a multiple of 2^-149
    m >>= -s;
    s = 0;
  }
  const int r = s % 32;
  const unsigned long long lo = m << r, hi = r ? m >> (64 - r) : 0;  // m * 2^r: up to 84 bits
  const long long sign = b >> 63 ? -1 : 1;
  g.k = s / 32;
  g.digit[0] = sign * static_cast<long long>(lo & 0xffffffffu);
  g.digit[1] = sign * static_cast<long long>(lo >> 32);
  g.digit[2] = sign * static_cast<long long>(hi);
  return g;
}

constexpr unsigned kFullMask = 0xffffffffu;

// The lanes' digits summed per group of limbs (all 32 lanes call it together): the lanes whose k equals
// the first pending lane's add their digits by shuffles (32 windows: below 2^37; 32 slots of those:
// below 2^42), lane 0 takes the three sums (take(k, d, first), first for the warp's first group), and
// the next group follows.
template <typename Take>
__device__ void warp_groups(const Digits& g, Take&& take) {
  bool first = true;
  for (unsigned pending = __ballot_sync(kFullMask, g.k >= 0); pending; first = false) {
    const int k = __shfl_sync(kFullMask, g.k, __ffs(pending) - 1);
    const bool mine = g.k == k;
    long long d[3];
    for (int j = 0; j < 3; ++j) {
      d[j] = mine ? g.digit[j] : 0;
      for (int offset = 16; offset > 0; offset /= 2) d[j] += __shfl_down_sync(kFullMask, d[j], offset);
    }
    if (threadIdx.x % 32 == 0) take(k, d, first);
    pending &= ~__ballot_sync(kFullMask, mine);
  }
}

__device__ void add_digits(Words* acc, int k, const long long (&d)[3]) {
  for (int j = 0; j < 3; ++j)
    if (d[j]) atomicAdd(&acc[k + j], static_cast<Words>(d[j]));
}

// One thread's window: an exact double sum of floats whose exponents lie in the band [W - kBand, W].
// A float x with bits u lies in the band when |x| < 2^(W - 126) (a float compare: NaN fails it, and so
// does infinity, as 2^128 is infinity) and 2u - 2 >= lo (the sign shifted out; the -2 sends zeros to the
// top, so they always pass): one FSETP, one IADD3 and one ISETP a float.
struct Window {
  double sum = 0.0;
  int rounds = 0;
  int adapts = kAdapts;  // band moves and outlier rounds left in this window (adapt)
  bool binned = false;   // the thread's bins hold sums (bins_round), to be added up by bins_to_acc
  bool wide = false;     // the last round did not fit one band: go straight to the bins
  unsigned want = 0;     // the band the last binned round fitted (bins_round), or 0
  // The band at first: W = 129, floats from 2^-16 to below 8: data of unit scale (uniform in [-1, 1],
  // normal(0, 1)) never moves it.
  unsigned top = 129;
  float hi = 8.0f;
  unsigned lo = ((129u - kBand) << 24) - 2;

  __device__ void set_band(unsigned t) {  // a biased exponent, 1 .. 254
    top = t;
    hi = __uint_as_float((top + 1) << 23);
    lo = top >= kBand + 2 ? ((top - kBand) << 24) - 2 : 0;  // W - kBand <= 1: every nonzero float, subnormals too
  }
  __device__ bool in_band(float x) const {
    const unsigned u = __float_as_uint(x);
    return fabsf(x) < hi && u + (u + 0xfffffffeu) >= lo;  // 2u - 2, wrapping, in one IADD3
  }

  // This thread's window into the block's Acc alone (a band move: rare, so contention does not matter).
  __device__ void flush_own(Words* acc) {
    const Digits g = digits_of(sum);
    for (int j = 0; g.k >= 0 && j < 3; ++j)
      if (g.digit[j]) atomicAdd(&acc[g.k + j], static_cast<Words>(g.digit[j]));
    sum = 0.0;
    rounds = 0;
  }
  // Every lane's window of the warp (all 32 lanes call it together): 512 threads flushing at once into
  // the same limbs would wait on each other's compare-and-swap loops (Hopper has no 64-bit shared-memory
  // atomic add), so the lanes that share a limb add their digits by shuffles and one lane adds the sums.
  __device__ void flush_warp(Words* acc) {
    warp_groups(digits_of(sum), [&](int k, const long long(&d)[3], bool) { add_digits(acc, k, d); });
    sum = 0.0;
    rounds = 0;
    adapts = kAdapts;
  }

  // The exact double sum of a round of floats that all lie in the band, in a short tree.
  __device__ void add_in_band(const Vec4 (&x)[kLoadsInFlight]) {
    double s[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      s[k] = (static_cast<double>(x[k].v[0]) + static_cast<double>(x[k].v[1])) +
             (static_cast<double>(x[k].v[2]) + static_cast<double>(x[k].v[3]));
    sum += (s[0] + s[1]) + (s[2] + s[3]);
  }

  __device__ bool all_in_band(const float* v) const {
    bool band = true;
#pragma unroll
    for (int i = 0; i < kRoundFloats; ++i) band &= in_band(v[i]);
    return band;
  }
  // Moves the band to [t - kBand, t], flushing the window first (a window holds one band's floats only).
  __device__ void move_band(unsigned t, Words* acc) {
    const int kept = rounds;
    flush_own(acc);
    rounds = kept;  // the warp's flush count goes on: harmless, as an emptied window holds fewer floats
    set_band(t);
  }

  // A round with a float outside the band, without the bins where that is cheap (at most kAdapts times
  // per window, as each costs atomics): one or two floats outside go into the Acc one by one (NaN and
  // the infinities into its counts) and the rest into the window; a round with more outside moves the
  // band to hold it, once a window, where it spans fewer than kBand binades. False: the bins.
  __device__ bool adapt(Vec4 (&x)[kLoadsInFlight], Words* acc);
};

// The binades a round spans, from twice each float's bits (the sign shifted out): the largest, and the
// smallest nonzero less one (so zeros, which every band holds, count for neither). Two integer min/max a
// float, no branch.
struct Span {
  unsigned top = 0, bottom = 0xffffffffu;
  __device__ void add(float x) {
    const unsigned twice = __float_as_uint(x) * 2u;
    top = max(top, twice);
    bottom = min(bottom, twice - 1u);
  }
  // The top exponent of a band that holds the round, or 0 where none does (many scales, NaN or an infinity).
  __device__ unsigned band_top() const {
    const unsigned hi = top >> 24, lo = bottom >> 24;  // biased exponents (lo one low at a power of two)
    if (hi < lo || hi - lo >= kBand || hi == 0xff) return 0;
    return min(max(hi, 1u) + 1, 254u);  // [hi + 1 - kBand, hi + 1] holds exponents lo .. hi
  }
};

// The band test of in_band() on |x|'s bits: written apart so that the compiler keeps none of the fast
// path's values alive for this rare one (it did, and the fast path spilled registers).
__device__ bool Window::adapt(Vec4 (&x)[kLoadsInFlight], Words* acc) {
  if (adapts == 0) return false;
  float* const v = reinterpret_cast<float*>(x);
  const unsigned below = (top + 1) << 23, from = top >= kBand + 2 ? (top - kBand) << 23 : 0;
  Span span;
  unsigned outside = 0;  // bit i: float i is outside the band
#pragma unroll
  for (int i = 0; i < kRoundFloats; ++i) {
    span.add(v[i]);
    const unsigned a = __float_as_uint(v[i]) & 0x7fffffffu;
    outside |= static_cast<unsigned>(a >= below || (a != 0 && a < from)) << i;
  }
  // One or two floats outside: outliers, whatever the round spans (a tail value must not move a band
  // that holds the rest). More: the round is at another scale, or of many.
  const bool few = __popc(outside) <= 2;
  const unsigned t = few ? 0 : span.band_top();
  if (!few && t == 0) return false;
  --adapts;
  if (!few) {  // after a move, a round that leaves the band again goes to the bins: no move thrashes
    move_band(t, acc);
    adapts = 0;
  } else {
#pragma unroll
    for (int i = 0; i < kRoundFloats; ++i)
      if (outside >> i & 1) {
        add_exact(acc, v[i]);
        v[i] = 0.0f;
      }
  }
  add_in_band(x);
  return true;
}

// A round for the bins: each float into its thread's bin for its band, exactly, with no branch (NaN and
// the infinities into band 15's bin, which they make NaN or an infinity). When the round's nonzero
// floats fit the same band as the last binned round's (and the window has not moved yet), the window's
// band moves there and the next round tries the window again; otherwise the next round goes straight to
// the bins. The thread's bins (bin[b * Block] for band b) are
// zeroed at its first such round. Inline: out of line (by value), data of many scales ran slower
// (docs/method.md).
template <unsigned Block>
__device__ __forceinline__ Window bins_round(Window w, const Vec4 (&x)[kLoadsInFlight], double* bin, Words* acc) {
  const float* v = reinterpret_cast<const float*>(x);
  if (!w.binned) {
#pragma unroll
    for (int k = 0; k < kBands; ++k) bin[k * Block] = 0.0;
    w.binned = true;
  }
  // excerpt: bins
  Span span;  // the round's largest and smallest binade, to move the window
#pragma unroll
  for (int i = 0; i < kRoundFloats; ++i) {
    bin[(__float_as_uint(v[i]) >> 27 & (kBands - 1)) * Block] += static_cast<double>(v[i]);  // band = exponent >> 4
    span.add(v[i]);
  }
  // end excerpt
  // The band moves only when two rounds in a row fit the same one, and at most once a window (as in
  // adapt): data of many scales whose rounds sometimes fit one band (lognormal) would otherwise move it,
  // with atomics, round after round.
  const unsigned t = span.band_top();
  const bool move = t != 0 && t == w.want && w.adapts > 0;
  w.want = t;
  if (move) {
    if (t != w.top) w.move_band(t, acc);
    w.adapts = 0;
  }
  w.wide = !move;
  return w;
}

// One round of 16 floats: the common case in registers; a round outside the band repaired by adapt or sent
// to the bins, lane by lane, where at most kRepairLanes lanes of the warp need it; where more do, the whole
// warp's round goes to the bins (data of many scales: a warp whose lanes took the window, adapt and the
// bins apart would run all three, and adapt's atomics would queue). Then, with the warp converged again,
// a flush of the whole warp once a window holds 2^11 floats.
template <unsigned Block>
__device__ void add_round(Window& w, double* bin, Vec4 (&x)[kLoadsInFlight], Words* acc) {
  const bool fits = !w.wide && w.all_in_band(reinterpret_cast<const float*>(x));
  const bool warp_bins = __popc(__ballot_sync(kFullMask, !fits)) > kRepairLanes;
  if (fits && !warp_bins)
    w.add_in_band(x);
  else if (warp_bins || !w.adapt(x, acc))
    w = bins_round<Block>(w, x, bin, acc);
  ++w.rounds;
  if (__any_sync(kFullMask, w.rounds == kWindowRounds)) w.flush_warp(acc);
}

// Every bin of the block into its Acc, exactly; all threads call it, after a barrier. A bin w of band b
// splits into hi, the nearest multiple of 2^26 units (2^(16b - 124)), and lo = w - hi, at most 2^25
// units: any sum of up to 2^11 his stays within 53 bits (27 bits each, plus 11), and so does any sum of
// los. Phase 1: thread (b, s) adds band b's his and los of the 16 threads of strip s; phase 2: a warp
// adds one band's strip sums (his or los) by shuffles, and its lane 0 adds the digits to the Acc.
template <unsigned Block>
__device__ void bins_to_acc(double* bins, bool used, Words* acc, unsigned* used_mask) {
  constexpr unsigned kStrips = Block / 16, kWarps = Block / 32;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned mask = __ballot_sync(kFullMask, used);
  if (lane == 0) used_mask[warp] = mask;
  __syncthreads();
  const unsigned b = threadIdx.x % kBands, s = threadIdx.x / kBands;
  const double round_at = __longlong_as_double(static_cast<long long>(1023 + 16 * b - 72) << 52) * 1.5;
  double hi = 0.0, lo = 0.0;
#pragma unroll
  for (unsigned j = 0; j < 16; ++j) {
    const unsigned owner = s * 16 + (j + b) % 16;                // rotated: the lanes of a warp read different banks
    if (!(used_mask[owner / 32] >> (owner % 32) & 1)) continue;  // an unused column was never zeroed
    double w = bins[b * Block + owner];
    if (b == kBands - 1 && !isfinite(w)) {  // band 15 held NaN or an infinity: counted apart
      atomicAdd(&acc[special_word(isnan(w), w < 0)], 1ull);
      w = 0.0;
    }
    const double h = (w + round_at) - round_at;
    hi += h;
    lo += w - h;
  }
  __syncthreads();  // every bin read: the strip sums go where their own threads' bins were
  bins[b * Block + 2 * s] = hi;
  bins[b * Block + 2 * s + 1] = lo;
  __syncthreads();
  for (unsigned q = warp; q < 2 * kBands; q += kWarps) {  // q: band q % 16, his (q < 16) or los
    double d = 0.0;
    for (unsigned t = lane; t < kStrips; t += 32) d += bins[(q % kBands) * Block + 2 * t + q / kBands];
    for (int offset = 16; offset > 0; offset /= 2) d += __shfl_down_sync(kFullMask, d, offset);
    if (lane == 0) {
      const Digits g = digits_of(d);
      if (g.k >= 0) add_digits(acc, g.k, g.digit);
    }
  }
  __syncthreads();  // the bins are free again (each thread zeroes its own column on its next use)
}

__device__ void normalize_words(Words* w) {
  Acc a;
  for (int k = 0; k < kAccWords; ++k) reinterpret_cast<long long*>(&a)[k] = static_cast<long long>(w[k]);
  normalize(a);
  for (int k = 0; k < kAccWords; ++k) w[k] = static_cast<Words>(reinterpret_cast<const long long*>(&a)[k]);
}

// Residency: 1024 threads an SM, so that their bins (8 KiB per 64 threads) leave the L1 cache room for the
// loads in flight; with 1536 threads the bins left 23 KB of L1 and every distribution ran slower. So the
// register budget is 64 a thread (at 40, as for 1536 threads, the fast path spilled: docs/method.md).
template <unsigned Block>
constexpr int kMinBlocks = Block >= 1024 ? 1 : static_cast<int>(std::min(32u, 1024 / Block));
constexpr int kResidentThreads = 1024;

// The exact sum of in[0..n) into total (scratch, zero), the last block into *acc_out or, Round, *out.
template <unsigned Block, bool Round>
__global__ void __launch_bounds__(Block, kMinBlocks<Block>)
    reduce_exact(const float* in, std::int64_t n, Words* total, unsigned* done, Acc* acc_out, float* out) {
  __shared__ Words acc[kAccWords];
  __shared__ Slot slots[Block / 32];          // the last flush: each warp's sums
  __shared__ unsigned used_mask[Block / 32];  // bins_to_acc: which threads' bins hold sums
  __shared__ bool last;
  __shared__ std::int64_t tile_of[2];  // this round's tile and the next one
  extern __shared__ double bins[];     // kBands x Block: bin b of thread t at b * Block + t
  for (unsigned k = threadIdx.x; k < kAccWords; k += Block) acc[k] = 0;
  if (threadIdx.x == 0) tile_of[0] = blockIdx.x;
  __syncthreads();

  // The aligned body in 16-byte vectors, as step 10 (agent::TileLoader's split): block b reads tile b
  // first, then the tile a counter hands it (done[1]: tiles gridDim.x, gridDim.x + 1, ... in the order
  // asked), so that a block on a fast SM takes more tiles and every SM ends at about the same time;
  // thread 0 asks for the next tile while the round's loads are in flight. Block 0's first threads add
  // the up to 6 floats before the first 16-byte boundary and after the body. One loop with a bounds
  // test per vector, not the loader's whole tiles and a last partial one: that would copy the round's
  // code, flush included, into the kernel twice.
  const reduce::agent::TileLoader<float, reduce::agent::TilePolicy<Block, kLoadsInFlight>> loader(in, n);
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < loader.edges()) add_exact(acc, loader.edge(threadIdx.x));

  Window w;
  double* const bin = bins + threadIdx.x;  // the thread's column of bins
  int round = 0;
  constexpr std::int64_t kTile = std::int64_t{Block} * kLoadsInFlight;
  const std::int64_t tiles = (loader.vectors + kTile - 1) / kTile;
  for (int r = 0;; ++r) {
    const std::int64_t tile = tile_of[r & 1];
    if (tile >= tiles) break;
    const std::int64_t base = tile * kTile;
    Vec4 x[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {  // all loads first...
      const std::int64_t i = base + k * Block + threadIdx.x;
      x[k] = i < loader.vectors ? loader.body[i] : Vec4{};
    }
    if (threadIdx.x == 0) tile_of[(r + 1) & 1] = gridDim.x + static_cast<std::int64_t>(atomicAdd(&done[1], 1u));
    add_round<Block>(w, bin, x, acc);  // ...then the window, or the bins
    if (++round % kBinRounds == 0) {   // block-uniform: every thread of the block turns as often
      if (__syncthreads_or(w.binned)) {
        bins_to_acc<Block>(bins, w.binned, acc, used_mask);
        w.binned = false;
      }
      if (round == kNormalizeRounds) {
        round = 0;
        if (threadIdx.x == 0) normalize_words(acc);
        __syncthreads();
      }
    }
    __syncthreads();
  }
  if (__syncthreads_or(w.binned)) bins_to_acc<Block>(bins, w.binned, acc, used_mask);
  // The launch's last flush, with no warp waiting on another's atomics: each warp's first group of limbs
  // goes into the warp's slot (the rare others into the accumulator), then warp 0 adds the slots up.
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) slots[warp].k = -1;
  warp_groups(digits_of(w.sum), [&](int k, const long long(&d)[3], bool first) {  // every lane of every warp
    if (first)
      slots[warp] = Slot{k, {d[0], d[1], d[2]}};
    else
      add_digits(acc, k, d);
  });
  __syncthreads();
  if (warp == 0) {  // alone on acc now: plain adds
    Digits g;       // lane's slot, if it has one
    if (lane < Block / 32 && slots[lane].k >= 0)
      g = Digits{slots[lane].k, {slots[lane].digit[0], slots[lane].digit[1], slots[lane].digit[2]}};
    warp_groups(g, [&](int k, const long long(&d)[3], bool) {
      for (int j = 0; j < 3; ++j) acc[k + j] += static_cast<Words>(d[j]);
    });
  }
  __syncthreads();
  // The block's Acc into the total, one word a thread for 15 threads, each limb but the top one as two
  // atomics: its low 32 bits into its own limb, the rest (signed, below 2^28: the loop keeps the block's
  // limbs below 2^60) into the next. Every block thus adds below 2^33 to a limb, so 2^20 blocks stay
  // below 2^53, with no thread walking the carries. The last block to finish takes the total and leaves
  // zeros.
  if (threadIdx.x < kAccWords) {
    const long long v = static_cast<long long>(acc[threadIdx.x]);
    const bool split = threadIdx.x + 1 < kLimbs;  // the top limb and the counts go whole
    const long long lo = split ? v & 0xffffffffLL : v, hi = split ? v >> 32 : 0;
    if (lo) atomicAdd(&total[threadIdx.x], static_cast<Words>(lo));
    if (hi) atomicAdd(&total[threadIdx.x + 1], static_cast<Words>(hi));
    __threadfence();  // before the count below: the last block must see every block's words
  }
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  if (threadIdx.x < kAccWords) acc[threadIdx.x] = atomicExch(&total[threadIdx.x], 0ull);
  __syncthreads();
  if (threadIdx.x != 0) return;
  done[0] = 0;
  done[1] = 0;
  Acc a;
  for (int k = 0; k < kAccWords; ++k) reinterpret_cast<long long*>(&a)[k] = static_cast<long long>(acc[k]);
  if constexpr (Round) {
    *out = rounded(a);  // which normalizes first
  } else {
    normalize(a);
    *acc_out = a;
  }
}

__global__ void round_kernel(const Acc* acc, float* out) { *out = rounded(*acc); }

template <unsigned Block>
constexpr std::size_t kBinBytes = sizeof(double) * kBands* Block;  // the kernel's dynamic shared memory
constexpr std::size_t kStaticBytes = 2048;  // above its static shared memory (1.3 KB at 1024 threads)
constexpr int kMaxDevices = 64;

// Allows the kernel its bins (above 48 KiB a kernel must ask), and asks for no more shared memory than
// its resident blocks use, so the rest of the SM's 256 KB stays L1 cache. The attributes belong to the
// current device, so they are set once per device (a second setting by a racing thread is harmless).
template <unsigned Block, bool Round>
cudaError_t allow_bins(int device) {
  static std::atomic<int> state[kMaxDevices];  // 0: not yet; else the cudaError_t plus one
  const bool cached = device >= 0 && device < kMaxDevices;
  if (cached && state[device] != 0) return static_cast<cudaError_t>(state[device] - 1);
  const cudaError_t e = [device] {
    int smem_per_sm = 0;
    CUDA_TRY(cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    const std::size_t blocks = std::max(1u, kResidentThreads / Block),
                      used = blocks * (kBinBytes<Block> + kStaticBytes);
    const int percent =
        static_cast<int>(std::min<std::size_t>(100, (100 * used + smem_per_sm - 1) / std::max(smem_per_sm, 1)));
    CUDA_TRY(cudaFuncSetAttribute(reduce_exact<Block, Round>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kBinBytes<Block>)));
    return cudaFuncSetAttribute(reduce_exact<Block, Round>, cudaFuncAttributePreferredSharedMemoryCarveout, percent);
  }();
  if (cached) state[device] = static_cast<int>(e) + 1;
  return e;
}

// The block to launch: cfg.block, or where a block's bins do not fit the device's shared memory per
// block (64 KiB on sm_75, 99 KiB on sm_86 and sm_89), the largest that fits. The bits do not change.
int fitting_block(int block, int device) {
  int optin = 0;
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) return block;
  while (block > 32 && kBinBytes<1> * static_cast<std::size_t>(block) + kStaticBytes > static_cast<std::size_t>(optin))
    block /= 2;
  return block;
}

template <unsigned Block>
std::int64_t grid_for(std::int64_t n, const reduce::LaunchConfig& cfg, int device) {
  if (cfg.grid > 0) return std::min(cfg.grid, kMaxGrid);
  static int per_sm = 0;  // resident blocks per SM of this kernel: asked once
  if (per_sm == 0 && (allow_bins<Block, true>(device) != cudaSuccess ||
                      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_exact<Block, true>, Block,
                                                                    kBinBytes<Block>) != cudaSuccess))
    per_sm = 1;
  per_sm = std::min<int>(per_sm, std::max(1u, kResidentThreads / Block));
  const std::int64_t tiles = reduce::ceil_div(n, 4 * std::int64_t{Block} * kLoadsInFlight);
  return std::clamp<std::int64_t>(tiles, 1, std::int64_t{std::max(per_sm, 1)} * std::max(cfg.sm_count, 1));
}

template <bool Round>
cudaError_t run(const float* in, std::int64_t n, Acc* acc_out, float* out, reduce::Scratch scratch,
                const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  if (scratch.bytes < scratch_bytes(n, cfg)) return cudaErrorInvalidValue;
  auto* const total = static_cast<Words*>(scratch.data);
  auto* const done = reinterpret_cast<unsigned*>(total + kAccWords);
  int device = 0;
  CUDA_TRY(cudaGetDevice(&device));
  return reduce::with_block_size(fitting_block(cfg.block, device), [&](auto block) {
    constexpr unsigned kBlock = decltype(block)::value;
    CUDA_TRY((allow_bins<kBlock, Round>(device)));
    const std::int64_t grid = grid_for<kBlock>(n, cfg, device);
    reduce_exact<kBlock, Round>
        <<<static_cast<unsigned>(grid), kBlock, kBinBytes<kBlock>, stream>>>(in, n, total, done, acc_out, out);
    CUDA_TRY(cudaGetLastError());
    return cudaSuccess;
  });
}

}  // namespace

std::size_t scratch_bytes(std::int64_t, const reduce::LaunchConfig&) { return sizeof(Acc) + 16; }

cudaError_t accumulate(const float* in, std::int64_t n, Acc* acc_out, reduce::Scratch scratch,
                       const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  return run<false>(in, n, acc_out, nullptr, scratch, cfg, stream);
}

cudaError_t round_to_float(const Acc* acc, float* out, cudaStream_t stream) {
  round_kernel<<<1, 1, 0, stream>>>(acc, out);
  return cudaGetLastError();
}

cudaError_t launch(const float* in, std::int64_t n, float* out, reduce::Scratch scratch,
                   const reduce::LaunchConfig& cfg, cudaStream_t stream) {
  return run<true>(in, n, nullptr, out, scratch, cfg, stream);
}

extern const reduce::Step kStep = {
    "15_exact",
    "the exact sum, rounded once",
    /*deterministic=*/true,
    reduce::BlockRule::any(512),
    scratch_bytes,
    launch,
    /*needs_zeroed_scratch=*/true,
};

}  // namespace step15
