// Job progress (core/mltcp_job.h): members' shares, the job's ratio, and
// the ratio handed back to a flow.  Expected values by hand in comments.
#include <gtest/gtest.h>

#include "test_util.h"

using mltcp_test::Driver;

namespace {

// The datapath's side: the job's two sums and one member per flow.
struct Job {
  uint64_t iter_bytes_sum = 0;
  uint64_t bytes_per_iter_sum = 0;

  void Add(const mltcp_job_delta &d) {
    iter_bytes_sum += d.iter_bytes;  // mod 2^64, as the BPF atomics
    bytes_per_iter_sum += d.bytes_per_iter;
  }
  uint32_t Ratio() const {
    return mltcp_job_ratio(iter_bytes_sum, bytes_per_iter_sum);
  }
  // What the datapath does after each of a flow's events.
  void Update(Driver &d, mltcp_job_member &m) {
    mltcp_job_delta delta;
    if (mltcp_job_member_update(&m, &d.it, &delta))
      Add(delta);
    mltcp_iter_set_job_ratio(&d.it, Ratio());
  }
};

// One iteration of `bytes` learned by detection, then idle and resume.
void Learn(Driver &d, uint64_t bytes) {
  d.Phase(bytes);
  ASSERT_TRUE(d.Idle(100000));
}

}  // namespace

TEST(Job, MembersShareOneRatio) {
  Driver a, b;
  mltcp_job_member ma, mb;
  mltcp_job_member_init(&ma);
  mltcp_job_member_init(&mb);
  Job j;
  Learn(a, 100000);
  Learn(b, 100000);
  j.Update(a, ma);
  j.Update(b, mb);
  EXPECT_EQ(j.bytes_per_iter_sum, 0u);  // nothing acked yet: not active
  EXPECT_EQ(a.Ratio(), 0u);             // so the flow's own ratio

  a.Phase(50000);  // a is half way, b has acked its first segment
  b.Phase(1000);
  j.Update(a, ma);
  j.Update(b, mb);
  EXPECT_EQ(j.bytes_per_iter_sum, 200000u);
  EXPECT_EQ(j.iter_bytes_sum, 51000u);
  EXPECT_EQ(b.Ratio(), 261u);  // 51000 * 1024 / 200000, b's own is 10
  EXPECT_EQ(mltcp_iter_own_ratio(&b.it), 10u);
  EXPECT_EQ(b.Gain(), 647u);   // 256 + 1536 * 261 / 1024: the job's F
  j.Update(a, ma);
  EXPECT_EQ(a.Ratio(), 261u);  // not its own 512

  a.Phase(50000);  // a done: counts as done, the job at 3/4 once b is half
  b.Phase(49000);
  j.Update(a, ma);
  j.Update(b, mb);
  EXPECT_EQ(j.iter_bytes_sum, 150000u);
  EXPECT_EQ(b.Ratio(), 768u);
}

TEST(Job, FinishedMemberCountsAsDoneAndRunOverIsCapped) {
  Driver a, b;
  mltcp_job_member ma{}, mb{};
  Job j;
  Learn(a, 100000);
  Learn(b, 100000);
  a.Phase(150000);  // past its size (within 2x): adds only its size
  b.Phase(100);
  j.Update(a, ma);
  j.Update(b, mb);
  EXPECT_EQ(j.iter_bytes_sum, 100100u);
  EXPECT_EQ(b.Ratio(), 512u);  // 100100 * 1024 / 200000 = 512.5
}

TEST(Job, BoundaryAndLeaveTakeTheShareOut) {
  Driver a, b;
  mltcp_job_member ma{}, mb{};
  Job j;
  Learn(a, 100000);
  Learn(b, 100000);
  a.Phase(100000);
  b.Phase(100000);
  j.Update(a, ma);
  j.Update(b, mb);
  EXPECT_EQ(j.iter_bytes_sum, 200000u);
  ASSERT_TRUE(a.Idle(100000));  // a's next iteration starts: its share goes
  j.Update(a, ma);
  EXPECT_EQ(j.iter_bytes_sum, 100000u);
  EXPECT_EQ(j.bytes_per_iter_sum, 100000u);
  a.Phase(10000);
  j.Update(a, ma);
  EXPECT_EQ(a.Ratio(), 563u);   // (10000 + b's 100000, done) / 200000

  mltcp_job_delta d;
  mltcp_job_member_leave(&mb, &d);  // b closes: the sums decrease
  j.Add(d);
  EXPECT_EQ(j.iter_bytes_sum, 10000u);
  EXPECT_EQ(j.bytes_per_iter_sum, 100000u);
  EXPECT_EQ(mb.iter_bytes, 0u);
}

TEST(Job, FlowWithoutStructureAddsNothingAndStaysNeutral) {
  Driver a, bulk;
  mltcp_job_member ma{}, mbulk{};
  Job j;
  Learn(a, 100000);
  a.Phase(1000);
  bulk.Phase(5000000);  // never idle: no iteration
  j.Update(a, ma);
  j.Update(bulk, mbulk);
  EXPECT_EQ(j.bytes_per_iter_sum, 100000u);
  EXPECT_EQ(bulk.Ratio(), MLTCP_RATIO_NONE);
  EXPECT_EQ(bulk.Gain(), MLTCP_GAIN_ONE);
  // A member that loses its structure (runs past 2x) takes its share out.
  a.Phase(249000);
  j.Update(a, ma);
  EXPECT_EQ(j.bytes_per_iter_sum, 0u);
  EXPECT_EQ(j.iter_bytes_sum, 0u);
  EXPECT_EQ(a.Ratio(), MLTCP_RATIO_NONE);
}

TEST(Job, IdleHintedMemberDoesNotHoldTheRatioDown) {
  // A job hint reaches every socket of the job, also one that carries no
  // part of the iteration (PyTorch's store connection).
  Driver a, store;
  mltcp_job_member ma{}, ms{};
  Job j;
  mltcp_iter_hint(&a.it, a.acked, 100000, a.now);
  mltcp_iter_hint(&store.it, store.acked, 100000, store.now);
  a.Phase(100000);
  j.Update(a, ma);
  j.Update(store, ms);
  EXPECT_EQ(j.bytes_per_iter_sum, 100000u);
  EXPECT_EQ(a.Ratio(), MLTCP_RATIO_ONE);  // not 1/2
}

TEST(Job, RatioGuards) {
  EXPECT_EQ(mltcp_job_ratio(0, 0), MLTCP_RATIO_NONE);
  EXPECT_EQ(mltcp_job_ratio(5000, 1000), MLTCP_RATIO_ONE);
  // A share subtracted from an entry it was never added to wraps the sums.
  EXPECT_EQ(mltcp_job_ratio(0 - 100ULL, 1000), MLTCP_RATIO_NONE);
  EXPECT_EQ(mltcp_job_ratio(10, 0 - 100ULL), MLTCP_RATIO_NONE);
  EXPECT_EQ(mltcp_job_ratio(1ULL << 40, 1ULL << 41), 512u);  // the 64-bit path
}

TEST(Job, ClearingTheJobRatioRestoresTheFlowsOwn) {
  Driver a;
  Learn(a, 100000);
  a.Phase(25000);
  mltcp_iter_set_job_ratio(&a.it, 900);
  EXPECT_EQ(a.Ratio(), 900u);
  mltcp_iter_set_job_ratio(&a.it, 5000);  // clamped to 1
  EXPECT_EQ(a.Ratio(), MLTCP_RATIO_ONE);
  mltcp_iter_set_job_ratio(&a.it, MLTCP_RATIO_NONE);
  EXPECT_EQ(a.Ratio(), 256u);
  EXPECT_EQ(a.it.flags & MLTCP_F_JOB, 0);
}

TEST(Job, GainCacheFollowsTheJobRatio) {
  Driver a;
  mltcp_gain_cache c;
  mltcp_gain_cache_init(&c);
  Learn(a, 100000);
  mltcp_iter_set_job_ratio(&a.it, 0);
  EXPECT_EQ(mltcp_gain_cached(&c, &a.it, &a.p), mltcp_reno_gain(&a.it, &a.p));
  const uint32_t at_zero = mltcp_gain_cached(&c, &a.it, &a.p);
  // Other members' bytes move the job's ratio while this flow sends nothing.
  mltcp_iter_set_job_ratio(&a.it, 1024);
  EXPECT_GT(mltcp_gain_cached(&c, &a.it, &a.p), at_zero);
  EXPECT_EQ(mltcp_gain_cached(&c, &a.it, &a.p), mltcp_reno_gain(&a.it, &a.p));
}
