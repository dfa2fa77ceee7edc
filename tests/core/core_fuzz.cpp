// libFuzzer target: random sequences of acks, idle gaps, hints, parameter
// changes, CNPs, timer advances and sends.  After every event it checks the
// core's invariants against an independent 128-bit reference:
//   F within [gain_min, gain_max] or exactly neutral; bytes_ratio within
//   [0, 1] or "none" and equal to the exact quotient; Reno w >= 1, CUBIC
//   cnt >= 2; the decrease's beta within [beta/2, (1 + beta)/2] and unscaled
//   when off or neutral; the cached Reno path consistent with its cached F;
//   DCQCN min <= R_C <= line, R_T <= line, alpha <= 1.
// ASan and UBSan turn any overflow or out-of-bounds into a crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

extern "C" {
#include "mltcp.h"
}

namespace {

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return n_ == 0; }
  template <typename T>
  T Take() {
    T v{};
    const size_t k = n_ < sizeof(T) ? n_ : sizeof(T);
    std::memcpy(&v, d_, k);
    d_ += k;
    n_ -= k;
    return v;
  }

 private:
  const uint8_t* d_;
  size_t n_;
};

[[noreturn]] void Violation(const char* what) {
  std::fprintf(stderr, "invariant violated: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Violation(what);
}

void CheckIter(const mltcp_iter& it, const mltcp_params& p, mltcp_reno_cache* cache,
               uint32_t cwnd) {
  const uint32_t ratio = mltcp_iter_ratio(&it);
  const uint32_t gain = mltcp_gain(&it, &p);
  if (ratio != MLTCP_RATIO_NONE) {
    Check(ratio <= MLTCP_RATIO_ONE, "bytes_ratio above 1");
    Check(it.bytes_per_iter != 0, "ratio without a known iteration size");
    const unsigned __int128 b = it.iter_bytes, e = it.bytes_per_iter;
    if (b < e && b <= (~0ULL >> MLTCP_RATIO_SHIFT)) {
      const unsigned __int128 exact = (b << MLTCP_RATIO_SHIFT) / e;
      Check(ratio == exact, "bytes_ratio differs from the exact quotient");
    }
    Check(b <= e * MLTCP_OVERRUN_MULT, "ratio reported after overrun");
  }
  if (!p.enabled || ratio == MLTCP_RATIO_NONE)
    Check(gain == MLTCP_GAIN_ONE, "gain not neutral without structure");
  else
    Check(gain >= p.gain_min && gain <= p.gain_max, "gain out of bounds");
  Check(mltcp_reno_ai_w(it.iter_bytes & 0xffffffff, gain) >= 1, "reno w < 1");
  Check(mltcp_cubic_cnt(it.iter_bytes & 0xffffffff, gain) >= 2, "cubic cnt < 2");
  for (const uint32_t base : {MLTCP_RENO_BETA, 717u}) {
    const uint32_t beta = mltcp_decrease_beta(base, gain, &p);
    Check(beta >= ((uint64_t)base * p.decrease_floor) >> MLTCP_BETA_SHIFT &&
              beta <= (MLTCP_BETA_ONE + base) / 2, "decrease beta out of bounds");
    if (!p.scale_decrease || gain == MLTCP_GAIN_ONE)
      Check(beta == base, "decrease scaled while off or neutral");
    Check(mltcp_ssthresh(it.iter_bytes & 0xffffffff, beta) >= 2, "ssthresh < 2");
    const uint32_t cwnd_now = it.iter_bytes & 0xffffffff;
    const uint32_t kept = mltcp_decrease_ssthresh(cwnd_now, base, gain, &p, 1);
    Check(kept >= mltcp_ssthresh(cwnd_now, base), "a two-way iteration cut deeper than its base");
    Check(kept >= mltcp_decrease_ssthresh(cwnd_now, base, gain, &p, 0),
          "a two-way iteration cut deeper than a one-way one");
  }
  Check(it.hinted <= it.iterations || it.iterations == MLTCP_U32_MAX,
        "more hinted boundaries than iterations");
  // The Reno fast path: a valid F, and w consistent with it.
  const uint32_t w = mltcp_reno_ai_w_cached(cache, &it, &p, cwnd);
  const uint32_t cached = mltcp_gain_cached(&cache->f, &it, &p);
  Check(cached == MLTCP_GAIN_ONE || (cached >= p.gain_min && cached <= p.gain_max),
        "cached gain out of bounds");
  Check(w == mltcp_reno_ai_w(cwnd, cached), "cached w differs from w of cached F");
  if (!p.enabled) Check(cached == MLTCP_GAIN_ONE, "cached gain not neutral when disabled");
}

void CheckDcqcn(const mltcp_dcqcn_rp& rp, const mltcp_dcqcn_params& p) {
  Check(rp.rate_cur_bps >= p.min_rate_bps, "R_C below minimum");
  Check(rp.rate_cur_bps <= p.line_rate_bps, "R_C above line rate");
  Check(rp.rate_target_bps <= p.line_rate_bps, "R_T above line rate");
  Check(rp.alpha <= MLTCP_DCQCN_ALPHA_ONE, "alpha above 1");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  mltcp_params p;
  mltcp_params_default(&p);
  mltcp_dcqcn_params dp;
  mltcp_dcqcn_params_default(&dp);

  uint64_t acked = in.Take<uint64_t>();
  uint32_t now = in.Take<uint32_t>();
  uint64_t now64 = now;
  mltcp_iter it;
  mltcp_iter_init(&it, acked, now);
  mltcp_dcqcn_rp rp;
  mltcp_dcqcn_rp_init(&rp, &dp, now64);
  mltcp_dcqcn_np np;
  mltcp_dcqcn_np_init(&np);
  mltcp_reno_cache cache;
  mltcp_reno_cache_init(&cache);
  uint32_t cwnd = 10;
  mltcp_job_activity job{};

  for (int step = 0; step < 4096 && !in.empty(); step++) {
    const uint8_t op = in.Take<uint8_t>() % 10;
    switch (op) {
      case 0: {  // an ack of up to 4 GB, a little later
        acked += in.Take<uint32_t>();
        now += in.Take<uint16_t>();
        mltcp_iter_on_ack(&it, acked, now);
        // The flow's job: its own activity, or a sibling's a little earlier.
        mltcp_job_activity_touch(&job, &p, &it, now - in.Take<uint16_t>(), in.Take<uint8_t>() & 1);
        break;
      }
      case 1: {  // idle gap, then TX_START and the window it starts with
        now += in.Take<uint32_t>() >> (in.Take<uint8_t>() & 31);
        const uint32_t srtt = in.Take<uint32_t>();
        Check(mltcp_job_member_gap_us(&job, &p, &it, now) <=
                  mltcp_elapsed_us(it.last_active_us, now),
              "a job member's gap longer than its own");
        if (in.Take<uint8_t>() & 1)
          mltcp_job_member_on_tx_start(&it, &job, &p, acked, now, srtt);
        else
          mltcp_iter_on_tx_start(&it, &p, acked, now, srtt);
        mltcp_job_activity_touch(&job, &p, &it, now, 1);
        const uint32_t min_rtt = in.Take<uint32_t>();
        const uint32_t mss = in.Take<uint16_t>();
        // Half of the connections carry some of their peer's data too.
        const uint64_t received = in.Take<uint8_t>() & 1 ? acked >> (in.Take<uint8_t>() & 7) : 0;
        // Half belong to a job, whose traffic is any pair.
        mltcp_traffic job_traffic{};
        const bool in_job = in.Take<uint8_t>() & 1;
        if (in_job) {
          job_traffic.acked = in.Take<uint64_t>() >> (in.Take<uint8_t>() & 63);
          job_traffic.received = in.Take<uint64_t>() >> (in.Take<uint8_t>() & 63);
        }
        const uint8_t flags_before = it.flags;
        const uint32_t start = mltcp_start_cwnd(&it, &p, cwnd, mss, min_rtt, srtt, acked, received,
                                                in_job ? &job_traffic : nullptr);
        const bool job_two_way =
            in_job && p.job_two_way && job_traffic.received > job_traffic.acked / 4;
        const bool two_way = received > acked / 4 || job_two_way;
        if (it.iter_bytes)
          Check(it.flags == flags_before, "the two-way flag changed mid-iteration");
        else
          Check(!(it.flags & MLTCP_F_TWO_WAY) == !two_way,
                "the two-way flag differs from the iteration's traffic");
        Check(start <= cwnd, "start drain raised the window");
        Check(start >= (cwnd < MLTCP_RECOVERY_WINDOW ? cwnd : MLTCP_RECOVERY_WINDOW),
              "start drain below the recovery window");
        const bool off = !p.enabled || !p.start_drain_windows || it.iter_bytes || mss == 0 ||
                         min_rtt == 0 || srtt <= min_rtt || cwnd <= MLTCP_RECOVERY_WINDOW ||
                         mltcp_iter_ratio(&it) == MLTCP_RATIO_NONE || two_way;
        const uint64_t drained =
            std::max<uint64_t>((uint64_t)cwnd * min_rtt / (srtt ? srtt : 1), MLTCP_RECOVERY_WINDOW);
        if (off || (unsigned __int128)it.bytes_per_iter <
                       (unsigned __int128)drained * mss * p.start_drain_windows)
          Check(start == cwnd, "start drain acted while off, mid-iteration, without structure, "
                               "in a short phase or on a two-way connection or job");
        else
          Check(start == drained, "start drain is not cwnd * min_rtt / srtt (at least 4)");
        break;
      }
      case 2: {  // application hint of any size
        mltcp_iter_hint(&it, acked, in.Take<uint64_t>(), now);
        break;
      }
      case 3: {  // any parameter set: applied only if valid
        // Ranges a little wider than the valid ones: most sets are valid,
        // some are not and must be refused.
        mltcp_params q = p;
        q.enabled = in.Take<uint8_t>() % 3;
        q.slope = in.Take<uint16_t>() % 9000;
        q.intercept = in.Take<uint16_t>() % 4500;
        q.gain_min = in.Take<uint16_t>() % 1100;
        q.gain_max = in.Take<uint16_t>() % 17000;
        q.idle_min_us = in.Take<uint32_t>() % 11000000;
        q.idle_max_us = in.Take<uint32_t>() % 11000000;
        q.idle_rtt_mult = in.Take<uint8_t>() % 70;
        q.scale_decrease = in.Take<uint8_t>() % 3;
        q.decrease_floor = in.Take<uint16_t>() % 1100;
        q.cubic_norm_excess = in.Take<uint16_t>() % 9000;
        q.job_gap = in.Take<uint8_t>() % 3;
        q.job_two_way = in.Take<uint8_t>() % 3;
        q.two_way_decrease = in.Take<uint8_t>() % 3;
        if (mltcp_params_validate(&q) == MLTCP_PARAM_OK) {
          mltcp_params_derive(&q);  // as every datapath does after a set
          p = q;
          // Documented: a cached F keeps the old parameters until its step
          // ends; checking it against the new bounds needs a fresh cache.
          mltcp_reno_cache_init(&cache);
        }
        break;
      }
      case 4: {  // counter restart or wild jump
        acked = in.Take<uint64_t>();
        mltcp_iter_on_ack(&it, acked, now);
        break;
      }
      case 5: {  // DCQCN: time passes (possibly backwards)
        now64 += static_cast<int64_t>(in.Take<int32_t>());
        mltcp_dcqcn_advance(&rp, &dp, now64, mltcp_gain(&it, &p));
        break;
      }
      case 6: {  // DCQCN: CE mark at the receiver, CNP to the sender
        if (mltcp_dcqcn_np_on_ce(&np, &dp, now64)) mltcp_dcqcn_on_cnp(&rp, &dp, now64);
        break;
      }
      case 7: {  // DCQCN: bytes sent
        mltcp_dcqcn_on_sent(&rp, &dp, in.Take<uint64_t>() >> (in.Take<uint8_t>() & 63),
                            mltcp_gain(&it, &p));
        break;
      }
      case 8: {  // DCQCN parameters: applied (with a fresh flow) only if valid
        mltcp_dcqcn_params q = dp;
        q.line_rate_bps = in.Take<uint64_t>() >> (in.Take<uint8_t>() & 63);
        q.min_rate_bps = in.Take<uint32_t>();
        q.rai_bps = in.Take<uint32_t>();
        q.rhai_bps = q.rai_bps + in.Take<uint32_t>();
        q.g_inv = in.Take<uint16_t>();
        q.rate_timer_us = in.Take<uint16_t>();
        if (mltcp_dcqcn_params_validate(&q) == MLTCP_DCQCN_PARAM_OK) {
          dp = q;
          mltcp_dcqcn_rp_init(&rp, &dp, now64);
        }
        break;
      }
      case 9: {  // the window changes
        cwnd = in.Take<uint32_t>();
        break;
      }
    }
    CheckIter(it, p, &cache, cwnd);
    CheckDcqcn(rp, dp);
  }
  return 0;
}
