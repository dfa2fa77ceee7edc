// Job progress (core/mltcp_job.h): members' shares, the job's ratio, and
// the ratio handed back to a flow.  Expected values by hand in comments.
#include <gtest/gtest.h>

#include "test_util.h"

using mltcp_test::Driver;

namespace {

// The datapath's side: the job's two sums and one member per flow.
struct Job : mltcp_test::FakeJob {
  void Update(Driver &d, mltcp_job_member &m) { FakeJob::Update(&d.it, &m); }
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

// The job's idle gap (mltcp_job_activity): members on one clock, each
// event followed by the datapath's touch, as bpf/mltcp.bpf.c does.
namespace {

struct Member {
  Driver d;
  mltcp_job_activity *job;

  // `bytes` acked from `at` on, 10 us apart, each ack touching the job.
  void Acks(uint32_t at, uint64_t bytes) {
    d.now = at;
    for (uint64_t left = bytes; left;) {
      const uint64_t a = left < 1448 ? left : 1448;
      left -= a;
      d.acked += a;
      d.now += 10;
      mltcp_iter_on_ack(&d.it, d.acked, d.now);
      mltcp_job_activity_touch(job, &d.p, &d.it, d.now, 0);
    }
  }
  // The application resumes at `at`; returns whether a boundary was seen.
  bool Start(uint32_t at) {
    d.now = at;
    const bool b = mltcp_job_member_on_tx_start(&d.it, job, &d.p, d.acked, d.now, d.srtt);
    mltcp_job_activity_touch(job, &d.p, &d.it, d.now, 1);
    return b;
  }
};

// Two members that have learned a 100 kB iteration and acked the next one
// together.
struct TwoMembers {
  mltcp_job_activity job{};
  Member a{{}, &job}, b{{}, &job};

  TwoMembers() {
    for (Member *m : {&a, &b}) {  // sizes learned before the job is known
      m->d.Phase(100000);
      EXPECT_TRUE(m->d.Idle(400000));
    }
    a.Acks(a.d.now, 100000);
    b.Acks(b.d.now, 100000);
  }
};

}  // namespace

TEST(JobGap, StripedSiblingsCountThePauseTheFirstStartEnded) {
  TwoMembers t;
  // 10 ms of silence; a starts the phase, b 300 us later with a busy: b
  // still sees the pause, a's start ended it while b was quiet.
  EXPECT_TRUE(t.a.Start(t.a.d.now + 10000));
  t.a.Acks(t.a.d.now, 3000);
  EXPECT_EQ(t.job.pause_us, 10000u);
  EXPECT_TRUE(t.b.Start(t.b.d.now + 10300));
}

TEST(JobGap, TurnTakingMemberSeesNoBoundaryWhileTheJobIsBusy) {
  TwoMembers t;
  // The job never pauses: b is silent for 5 ms (over the 2 ms threshold)
  // while a sends; b's own gap would end an iteration.
  const uint32_t b_quiet = t.b.d.now;
  for (int i = 0; i < 5; i++)  // 490 us of acks, 1 ms apart
    t.a.Acks(t.a.d.now + 1000, 70000);
  ASSERT_GT(t.a.d.now - b_quiet, 5000u);
  const uint64_t iterations = t.b.d.it.iterations;
  EXPECT_FALSE(t.b.Start(t.a.d.now + 20));
  EXPECT_EQ(t.b.d.it.iterations, iterations);
  // job_gap = 0: the member's own gap, as without a job.
  TwoMembers u;
  u.b.d.p.job_gap = 0;
  for (int i = 0; i < 5; i++)
    u.a.Acks(u.a.d.now + 1000, 70000);
  EXPECT_TRUE(u.b.Start(u.a.d.now + 20));
}

TEST(JobGap, AnAckEndsNoPause) {
  TwoMembers t;
  // A retransmission after a timeout, acked after 10 ms of silence, is
  // activity but no application start: b, resuming just after, sees no
  // pause of the job's and its 10 ms gap does not count.
  t.a.Acks(t.a.d.now + 10000, 1448);
  EXPECT_FALSE(t.b.Start(t.a.d.now + 100));
  EXPECT_EQ(t.job.pause_us, 0u);
}

TEST(JobGap, APauseBeforeTheMembersLastActivityIsNotItsGap) {
  TwoMembers t;
  EXPECT_TRUE(t.a.Start(t.a.d.now + 10000));  // the job's pause, recorded
  t.b.Acks(t.a.d.now + 50, 1448);             // b active after it ended
  t.a.Acks(t.a.d.now, 1448 * 300);            // a busy for 3 ms
  ASSERT_GT(t.a.d.now - t.b.d.now, 2000u);    // over b's threshold
  EXPECT_FALSE(t.b.Start(t.a.d.now + 100));
}

TEST(JobGap, BulkMemberDoesNotMakeTheJobBusy) {
  TwoMembers t;
  Member bulk{{}, &t.job};
  bulk.Acks(t.a.d.now + 1000, MLTCP_SEED_BYTES_MAX);  // no size yet: counts
  EXPECT_EQ(t.job.last_active_us, bulk.d.now);
  bulk.Acks(bulk.d.now + 10, 1000000);  // never idle: past 4 MiB, a bulk flow
  EXPECT_EQ(bulk.d.it.bytes_per_iter, 0u);
  EXPECT_LT(t.job.last_active_us, bulk.d.now - 5000);
  EXPECT_TRUE(t.a.Start(bulk.d.now + 100));
}

TEST(JobGap, NoJobUnknownJobOrOwnGapShorterGivesTheOwnGap) {
  mltcp_job_activity job{};
  Member a{{}, &job};
  a.Acks(1000, 100000);
  EXPECT_EQ(mltcp_job_member_gap_us(&job, &a.d.p, &a.d.it, a.d.now + 7000), 7000u);
  EXPECT_EQ(mltcp_job_member_gap_us(nullptr, &a.d.p, &a.d.it, a.d.now + 7000), 7000u);
  job.known = 1;
  job.last_active_us = a.d.now - 5000;  // the job idle longer than the member
  EXPECT_EQ(mltcp_job_member_gap_us(&job, &a.d.p, &a.d.it, a.d.now + 300), 300u);
}

// A job's traffic: each member reports its counters' growth in steps of at
// least 64 KiB; a member reads the sums' growth since its own previous
// transmit start.  Two ring ranks' sockets on one host: one only sends, one
// only receives (it reports as it sends its acks).
TEST(JobTraffic, MembersReportGrowthInStepsAndReadSinceTheirLastStart) {
  mltcp_traffic sums{}, sender{}, receiver{}, d{}, seen{}, since{};
  auto report = [&](mltcp_traffic &reported, uint64_t acked, uint64_t received) {
    if (!mltcp_job_traffic_report(&reported, acked, received, &d))
      return false;
    sums.acked += d.acked;
    sums.received += d.received;
    return true;
  };
  EXPECT_FALSE(report(sender, MLTCP_JOB_TRAFFIC_STEP - 1, 0));  // below a step: later
  EXPECT_EQ(sender.acked, 0u);
  EXPECT_TRUE(report(sender, MLTCP_JOB_TRAFFIC_STEP, 0));
  EXPECT_TRUE(report(receiver, 0, 1000000));
  EXPECT_TRUE(report(sender, 1000000, 0));
  EXPECT_EQ(sums.acked, 1000000u);
  EXPECT_EQ(sums.received, 1000000u);
  mltcp_job_traffic_since(&seen, sums.acked, sums.received, &since);
  EXPECT_EQ(since.acked, 1000000u);
  EXPECT_EQ(since.received, 1000000u);
  EXPECT_TRUE(mltcp_carries_peer_data(since.acked, since.received));
  // The next phase: the ring's receiving socket was idle (a job that once
  // downloaded its dataset): only the growth since counts.
  EXPECT_TRUE(report(sender, 3000000, 0));
  mltcp_job_traffic_since(&seen, sums.acked, sums.received, &since);
  EXPECT_EQ(since.acked, 2000000u);
  EXPECT_EQ(since.received, 0u);
  EXPECT_FALSE(mltcp_carries_peer_data(since.acked, since.received));
  EXPECT_EQ(seen.acked, 3000000u);
}
