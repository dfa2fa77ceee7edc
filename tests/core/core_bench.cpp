// Per-event cost of the policy core, next to a plain Reno additive-increase
// step measured in the same run (the machine is noisy; the ratio is what
// counts).  Both per-ack handlers are called as the kernel calls a
// congestion control's cong_avoid: through a function pointer, on a socket
// struct in memory.  Ends with:
//   RESULT core_ack_ns=<x> reno_step_ns=<y> ratio=<x/y>
//   RESULT core_job_ack_ns=<z> ratio=<z/y> job_extra_ns=<z-x>  (a job member)
//   RESULT dcqcn_cnp_ns=... dcqcn_timer_ns=... dcqcn_sent_ns=...
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>

#include "test_util.h"

namespace {

// A tcp_sock reduced to what a congestion control touches per ack.
struct FakeSock {
  uint32_t snd_cwnd = 100;
  uint32_t snd_cwnd_cnt = 0;
  uint32_t snd_ssthresh = 50;  // in congestion avoidance
  uint32_t srtt_us = 100;
  uint64_t bytes_acked = 0;
  uint64_t tcp_mstamp = 0;
  bool cwnd_limited = true;
  mltcp_iter ca;  // inet_csk_ca()
  mltcp_reno_cache cache;
  mltcp_params params;
};

// The kernel's tcp_cong_avoid_ai() (net/ipv4/tcp_cong.c).
inline void CongAvoidAi(FakeSock* sk, uint32_t w, uint32_t acked) {
  if (sk->snd_cwnd_cnt >= w) {
    sk->snd_cwnd_cnt = 0;
    sk->snd_cwnd++;
  }
  sk->snd_cwnd_cnt += acked;
  if (sk->snd_cwnd_cnt >= w) {
    const uint32_t delta = sk->snd_cwnd_cnt / w;
    sk->snd_cwnd_cnt -= delta * w;
    sk->snd_cwnd += delta;
  }
}

// tcp_reno_cong_avoid(): the baseline, as the stack calls it per ack.
__attribute__((noinline)) void RenoCongAvoid(FakeSock* sk, uint32_t acked) {
  if (!sk->cwnd_limited) return;
  if (sk->snd_cwnd < sk->snd_ssthresh) return;  // slow start: not measured
  CongAvoidAi(sk, sk->snd_cwnd, acked);
}

// The MLTCP Reno variant's per-ack work: account the acked bytes (the
// datapath calls this from its ack hook), get F and the scaled w (cached
// between gain steps), grow.
__attribute__((noinline)) void MltcpCongAvoid(FakeSock* sk, uint32_t acked) {
  mltcp_iter_on_ack(&sk->ca, sk->bytes_acked, (uint32_t)sk->tcp_mstamp);
  if (!sk->cwnd_limited) return;
  if (sk->snd_cwnd < sk->snd_ssthresh) return;
  CongAvoidAi(sk, mltcp_reno_ai_w_cached(&sk->cache, &sk->ca, &sk->params, sk->snd_cwnd),
              acked);
}

// A member of a job of several connections (BPF's per-cgroup jobs): the
// same, then its share and activity into the job's entry and the job's
// ratio back (bpf/mltcp.bpf.c's mltcp_job_update, with plain adds where
// BPF uses atomics on the shared entry).
mltcp_test::FakeJob g_job;
mltcp_job_activity g_job_activity{};
mltcp_job_member g_member{};

__attribute__((noinline)) void MltcpJobCongAvoid(FakeSock* sk, uint32_t acked) {
  MltcpCongAvoid(sk, acked);
  mltcp_job_activity_touch(&g_job_activity, &sk->params, &sk->ca, (uint32_t)sk->tcp_mstamp, 0);
  g_job.Update(&sk->ca, &g_member);
}

using CongAvoidFn = void (*)(FakeSock*, uint32_t);
constexpr uint32_t kMss = 1448;
constexpr uint32_t kCwndCap = 1 << 16;

// Both controls are reached the way the kernel reaches them: through the
// congestion ops' function pointer, once per ack, on the socket's state.
void RunCongAvoid(benchmark::State& state, CongAvoidFn fn) {
  FakeSock sk;
  mltcp_params_default(&sk.params);
  mltcp_iter_init(&sk.ca, 0, 0);
  mltcp_reno_cache_init(&sk.cache);
  // Hinted 16 MB iterations: F steps every 256 KB (181 acks), and the
  // iteration restarts every 11586 acks, so the slow paths are included.
  constexpr uint64_t kIterBytes = 16ULL << 20;
  mltcp_iter_hint(&sk.ca, 0, kIterBytes, 0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(fn);
    sk.bytes_acked += kMss;
    sk.tcp_mstamp += 3;
    fn(&sk, 1);
    if (sk.ca.iter_bytes >= kIterBytes)
      mltcp_iter_hint(&sk.ca, sk.bytes_acked, kIterBytes, (uint32_t)sk.tcp_mstamp);
    if (sk.snd_cwnd > kCwndCap) sk.snd_cwnd = 100;
    benchmark::DoNotOptimize(sk.snd_cwnd);
  }
}

void BM_RenoStep(benchmark::State& state) { RunCongAvoid(state, RenoCongAvoid); }
void BM_MltcpAck(benchmark::State& state) { RunCongAvoid(state, MltcpCongAvoid); }
void BM_MltcpJobAck(benchmark::State& state) { RunCongAvoid(state, MltcpJobCongAvoid); }

void BM_DcqcnCnp(benchmark::State& state) {
  mltcp_dcqcn_params p;
  mltcp_dcqcn_params_default(&p);
  mltcp_dcqcn_rp rp;
  mltcp_dcqcn_rp_init(&rp, &p, 0);
  uint64_t now = 0;
  for (auto _ : state) {
    now += 50;
    mltcp_dcqcn_on_cnp(&rp, &p, now);
    if (rp.rate_cur_bps == p.min_rate_bps) mltcp_dcqcn_rp_init(&rp, &p, now);
    benchmark::DoNotOptimize(rp.rate_cur_bps);
  }
}

void BM_DcqcnTimer(benchmark::State& state) {
  mltcp_dcqcn_params p;
  mltcp_dcqcn_params_default(&p);
  mltcp_dcqcn_rp rp;
  mltcp_dcqcn_rp_init(&rp, &p, 0);
  mltcp_dcqcn_on_cnp(&rp, &p, 0);
  uint64_t now = 0;
  for (auto _ : state) {
    now += p.rate_timer_us;  // one alpha period and one rate-timer expiry
    mltcp_dcqcn_advance(&rp, &p, now, 1536);
    if (rp.rate_cur_bps == p.line_rate_bps) mltcp_dcqcn_on_cnp(&rp, &p, now);
    benchmark::DoNotOptimize(rp.rate_cur_bps);
  }
}

void BM_DcqcnSent(benchmark::State& state) {
  mltcp_dcqcn_params p;
  mltcp_dcqcn_params_default(&p);
  mltcp_dcqcn_rp rp;
  mltcp_dcqcn_rp_init(&rp, &p, 0);
  for (auto _ : state) {
    mltcp_dcqcn_on_sent(&rp, &p, 4096, 1536);  // one 4 KB RoCE packet
    benchmark::DoNotOptimize(rp.rate_cur_bps);
  }
}

BENCHMARK(BM_RenoStep);
BENCHMARK(BM_MltcpAck);
BENCHMARK(BM_MltcpJobAck);
BENCHMARK(BM_DcqcnCnp);
BENCHMARK(BM_DcqcnTimer);
BENCHMARK(BM_DcqcnSent);

// Prints the usual table and remembers ns per iteration of each benchmark.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs)
      if (!r.error_occurred) ns[r.benchmark_name()] = r.GetAdjustedRealTime();
  }
  std::map<std::string, double> ns;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double core = reporter.ns["BM_MltcpAck"], reno = reporter.ns["BM_RenoStep"];
  if (core <= 0 || reno <= 0) {
    std::fprintf(stderr, "core_bench: a benchmark did not run\n");
    return 1;
  }
  std::printf("RESULT dcqcn_cnp_ns=%.2f dcqcn_timer_ns=%.2f dcqcn_sent_ns=%.2f\n",
              reporter.ns["BM_DcqcnCnp"], reporter.ns["BM_DcqcnTimer"],
              reporter.ns["BM_DcqcnSent"]);
  std::printf("RESULT core_ack_ns=%.2f reno_step_ns=%.2f ratio=%.2f extra_ns=%.2f\n",
              core, reno, core / reno, core - reno);
  const double job = reporter.ns["BM_MltcpJobAck"];
  std::printf("RESULT core_job_ack_ns=%.2f ratio=%.2f job_extra_ns=%.2f\n", job, job / reno,
              job - core);
  return 0;
}
