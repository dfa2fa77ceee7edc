// Helpers shared by the core unit tests.
#pragma once

#include <cstdint>

extern "C" {
#include "mltcp.h"
}

namespace mltcp_test {

inline mltcp_params DefaultParams() {
  mltcp_params p;
  mltcp_params_default(&p);
  return p;
}

// Drives a tracker like a kernel datapath would: acks of `mss` bytes spaced
// `ack_gap_us` apart, then a compute gap, then TX_START.
struct Driver {
  mltcp_iter it{};
  mltcp_params p = DefaultParams();
  uint64_t acked = 0;
  uint32_t now = 1000;
  uint32_t srtt = 100;

  Driver() { mltcp_iter_init(&it, acked, now); }

  // Sends one communication phase of `bytes` in `mss` acks.
  void Phase(uint64_t bytes, uint32_t mss = 1448, uint32_t ack_gap_us = 10) {
    uint64_t left = bytes;
    while (left) {
      const uint64_t a = left < mss ? left : mss;
      left -= a;
      acked += a;
      now += ack_gap_us;
      mltcp_iter_on_ack(&it, acked, now);
    }
  }
  // Idles `gap_us`, then sending resumes; returns whether a boundary was seen.
  bool Idle(uint32_t gap_us) {
    now += gap_us;
    return mltcp_iter_on_tx_start(&it, &p, acked, now, srtt) != 0;
  }
  uint32_t Gain() const { return mltcp_gain(&it, &p); }
  uint32_t Ratio() const { return mltcp_iter_ratio(&it); }
};

// The datapath's side of a job (bpf/mltcp.bpf.c, mltcp_job_update): the
// two sums, added to mod 2^64 as the BPF atomics do, and the job's ratio
// handed back to the member's flow.
struct FakeJob {
  uint64_t iter_bytes_sum = 0;
  uint64_t bytes_per_iter_sum = 0;

  void Add(const mltcp_job_delta &d) {
    iter_bytes_sum += d.iter_bytes;
    bytes_per_iter_sum += d.bytes_per_iter;
  }
  uint32_t Ratio() const { return mltcp_job_ratio(iter_bytes_sum, bytes_per_iter_sum); }
  // What the datapath does after each of a member's events.
  void Update(mltcp_iter *it, mltcp_job_member *m) {
    mltcp_job_delta delta;
    if (mltcp_job_member_update(m, it, &delta)) Add(delta);
    mltcp_iter_set_job_ratio(it, Ratio());
  }
};

}  // namespace mltcp_test
