// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// mltcp_replay.cpp - userspace half of the same-input agreement test.
//
//   mltcp_replay gen SEED FLOWS > events.bin   a reproducible event sequence
//   mltcp_replay run events.bin > decisions.bin
//   mltcp_replay summary events.bin            what the sequence exercises
//   mltcp_replay gen-dp ALGO SEED [nohints] > dp-events.bin
//   mltcp_replay run-dp dp-events.bin > dp-decisions.bin
//
// The "dp" pair is the datapath agreement test (tests/replay/): ALGO is
// reno, cubic or dcqcn; run-dp is the reference every datapath's adapter
// must equal (tests/replay/dp_reference.h).
//
// The sequence imitates what tcp_mltcp.ko's hooks see on training flows:
// per flow an INIT, then iterations of acks (bursts with intra-phase pauses)
// separated by compute gaps that end in a TX_START, with srtt jitter; some
// flows switch to hints, some iterations are outliers, the clock and the
// 32-bit snapshot of the acked counter wrap, the on/off switch toggles.
// "run" applies mltcp_replay_step() (mltcp_replay.h, shared with the test
// kernel module) through the core and writes one decision record per event.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "mltcp.h"
#include "mltcp_replay.h"
}
#include "dp_reference.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "mltcp_replay: %s\n", what.c_str());
  std::exit(1);
}

void Usage() {
  std::fprintf(stderr,
               "usage: mltcp_replay gen SEED FLOWS > events.bin\n"
               "       mltcp_replay run events.bin > decisions.bin\n"
               "       mltcp_replay summary events.bin\n"
               "       mltcp_replay gen-dp reno|cubic|dcqcn SEED [nohints] > dp-events.bin\n"
               "       mltcp_replay run-dp dp-events.bin > dp-decisions.bin\n");
  std::exit(2);
}

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  std::vector<mltcp_replay_event> Flows(int flows) {
    for (int f = 0; f < flows; ++f) Flow(f);
    return out_;
  }

 private:
  uint32_t Uniform(uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_);
  }

  void Emit(uint32_t kind, uint64_t bytes = 0) {
    mltcp_replay_event ev{};
    ev.kind = kind;
    ev.now_us = now_us_;
    ev.acked_total = acked_;
    ev.bytes = bytes;
    ev.srtt_us = srtt_us_;
    ev.cwnd = Uniform(2, 4000);
    ev.cubic_cnt = Uniform(0, 3) == 0 ? Uniform(0, 2) : Uniform(2, 100000);
    if (kind == MLTCP_REPLAY_INIT)
      ev.seed = Uniform(0, UINT32_MAX);
    out_.push_back(ev);
  }

  void Flow(int f) {
    // Start near the wrap points of the clock and the counter snapshot.
    now_us_ = (f % 2) ? 0xffffffffu - Uniform(0, 2000000) : Uniform(0, 1u << 30);
    acked_ = (f % 3 == 1) ? 0xffffffffull - Uniform(0, 3000000) : Uniform(0, 1u << 20);
    srtt_us_ = Uniform(50, 5000);
    Emit(MLTCP_REPLAY_INIT);
    const uint64_t size = Uniform(50000, 4000000);
    const int iterations = static_cast<int>(Uniform(6, 30));
    const bool hinted = (f % 4 == 3);
    for (int i = 0; i < iterations; ++i) {
      if (f % 5 == 2 && i == iterations / 2) Emit(MLTCP_REPLAY_ENABLE, 0);
      if (f % 5 == 2 && i == iterations / 2 + 2) Emit(MLTCP_REPLAY_ENABLE, 1);
      // Compute phase, then sending resumes with nothing in flight.
      now_us_ += Uniform(3000, 200000);
      srtt_us_ = Uniform(50, 8000);
      if (hinted && i > 1)
        Emit(MLTCP_REPLAY_HINT, Uniform(0, 4) == 0 ? 0 : size);
      Emit(MLTCP_REPLAY_TX_START);
      uint64_t this_iter = size;
      if (Uniform(0, 9) == 0) this_iter = size * Uniform(3, 5);  // outlier
      if (Uniform(0, 9) == 0) this_iter = size / Uniform(3, 5);
      if (f % 2 == 0 && i == 0) this_iter = 32;  // a hello: the next iteration is seeded
      uint64_t sent = 0;
      while (sent < this_iter) {
        const uint64_t seg = std::min<uint64_t>(this_iter - sent, Uniform(1, 64) * 1448);
        sent += seg;
        acked_ += seg;
        now_us_ += Uniform(1, 400);
        Emit(MLTCP_REPLAY_ACK);
        if (Uniform(0, 60) == 0) {  // intra-phase pause (DDP bucket)
          now_us_ += Uniform(100, 3000);
          Emit(MLTCP_REPLAY_TX_START);
        }
      }
    }
  }

  std::mt19937 rng_;
  std::vector<mltcp_replay_event> out_;
  uint32_t now_us_ = 0;
  uint64_t acked_ = 0;
  uint32_t srtt_us_ = 0;
};

template <typename Event = mltcp_replay_event>
std::vector<Event> Read(const char* path) {
  FILE* f = std::fopen(path, "rb");
  if (!f) Fail(std::string("cannot open ") + path + ": " + std::strerror(errno));
  std::vector<Event> evs;
  Event ev;
  while (std::fread(&ev, sizeof(ev), 1, f) == 1) evs.push_back(ev);
  const bool trailing = !std::feof(f) || std::ftell(f) % sizeof(ev) != 0;
  std::fclose(f);
  if (trailing) Fail(std::string(path) + ": not a whole number of event records");
  return evs;
}

void Write(const void* data, size_t size) {
  if (std::fwrite(data, 1, size, stdout) != size) Fail("write to stdout failed");
}

}  // namespace

int main(int argc, char** argv) {
  static_assert(sizeof(mltcp_replay_event) == MLTCP_REPLAY_EVENT_SIZE);
  static_assert(sizeof(mltcp_replay_decision) == MLTCP_REPLAY_DECISION_SIZE);
  static_assert(sizeof(mltcp_dp_event) == MLTCP_DP_EVENT_SIZE);
  static_assert(sizeof(mltcp_dp_decision) == MLTCP_DP_DECISION_SIZE);
  if (argc < 3) Usage();
  const std::string cmd = argv[1];
  if (cmd == "gen-dp" && (argc == 4 || (argc == 5 && std::string(argv[4]) == "nohints"))) {
    const std::string algo = argv[2];
    const uint32_t a = algo == "reno" ? MLTCP_DP_RENO : algo == "cubic" ? MLTCP_DP_CUBIC
                       : algo == "dcqcn" ? MLTCP_DP_DCQCN : 99;
    if (a == 99) Fail("gen-dp: unknown algorithm '" + algo + "' (reno, cubic, dcqcn)");
    const auto evs = mltcp_dp::Generator(a, static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 0)),
                                         argc == 4).Run();
    Write(evs.data(), evs.size() * sizeof(evs[0]));
    return 0;
  }
  if (cmd == "run-dp" && argc == 3) {
    const auto evs = Read<mltcp_dp_event>(argv[2]);
    mltcp_dp::Reference ref;
    std::vector<mltcp_dp_decision> out;
    out.reserve(evs.size());
    for (size_t i = 0; i < evs.size(); ++i) out.push_back(ref.Step(evs[i], static_cast<uint32_t>(i)));
    Write(out.data(), out.size() * sizeof(out[0]));
    return 0;
  }
  if (cmd == "gen" && argc == 4) {
    const auto evs = Generator(static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 0)))
                         .Flows(std::atoi(argv[3]));
    Write(evs.data(), evs.size() * sizeof(evs[0]));
    return 0;
  }
  if (cmd == "run" && argc == 3) {
    mltcp_replay_flow fl{};
    mltcp_params p;
    mltcp_params_default(&p);
    mltcp_iter_init(&fl.it, 0, 0);
    mltcp_reno_cache_init(&fl.cache);
    const auto evs = Read(argv[2]);
    std::vector<mltcp_replay_decision> out(evs.size());
    for (size_t i = 0; i < evs.size(); ++i)
      mltcp_replay_step(&fl, &p, &evs[i], static_cast<uint32_t>(i), &out[i]);
    Write(out.data(), out.size() * sizeof(out[0]));
    return 0;
  }
  if (cmd == "summary" && argc == 3) {
    // What the reference decisions cover, so the test can insist on it.
    mltcp_replay_flow fl{};
    mltcp_params p;
    mltcp_params_default(&p);
    mltcp_iter_init(&fl.it, 0, 0);
    mltcp_reno_cache_init(&fl.cache);
    const auto evs = Read(argv[2]);
    unsigned long boundaries = 0, hinted = 0, scaled = 0, neutral = 0;
    for (size_t i = 0; i < evs.size(); ++i) {
      mltcp_replay_decision d;
      mltcp_replay_step(&fl, &p, &evs[i], static_cast<uint32_t>(i), &d);
      boundaries += d.boundary;
      hinted += evs[i].kind == MLTCP_REPLAY_HINT;
      (d.gain == MLTCP_GAIN_ONE ? neutral : scaled)++;
    }
    std::printf("events=%zu boundaries=%lu hints=%lu gain_scaled=%lu gain_neutral=%lu\n",
                evs.size(), boundaries, hinted, scaled, neutral);
    return boundaries && hinted && scaled && neutral ? 0 : 1;
  }
  Usage();
}
