// SPDX-License-Identifier: GPL-2.0-only
//
// run.cc - one mltcp-sim simulation (Scenario::Run): hosts for the jobs,
// the topology, the jobs' flows and a bulk flow, then ns-3 until every job
// has done its iterations, and what the run measured.
#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <sstream>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-module.h"

#include "scenario.h"

using namespace ns3;

namespace mltcp_sim {

namespace {

class BulkFlow {
 public:
  explicit BulkFlow(Ptr<JobFlow> f) : f_(f) {}
  void Start() { Top(); }
  void Top() {
    if (stopped_)
      return;
    if (f_->queued() - f_->received() < kBacklog)
      f_->Send(kBacklog);
    Simulator::Schedule(MilliSeconds(1), &BulkFlow::Top, this);
  }
  void Stop() { stopped_ = true; }
  uint64_t received() const { return f_->received(); }

 private:
  static constexpr uint64_t kBacklog = 64ull << 20;
  Ptr<JobFlow> f_;
  bool stopped_ = false;
};

}  // namespace

RunResult Scenario::Run(const std::vector<JobPlan>& plan) {
  const auto wall0 = std::chrono::steady_clock::now();
  Configure();
  // Hosts: dumbbell: 2 per job (sender, receiver) + 2 for bulk.
  // Leaf-spine: --ring-workers per job, ring flows worker i -> i+1.
  uint32_t hosts = 0;
  std::vector<std::vector<uint32_t>> job_hosts;
  for (size_t j = 0; j < plan.size(); j++) {
    const uint32_t w = o_.topology == "dumbbell" ? 2 : o_.ring_workers;
    std::vector<uint32_t> hs;
    for (uint32_t i = 0; i < w; i++)
      hs.push_back(hosts++);
    job_hosts.push_back(hs);
  }
  uint32_t bulk_src = 0, bulk_dst = 0;
  if (o_.bulk) {
    bulk_src = hosts++;
    bulk_dst = hosts++;
  }
  if (o_.topology == "dumbbell")
    BuildDumbbell(hosts);
  else
    BuildLeafSpine(hosts);

  std::vector<Ptr<TrainingJob>> jobs;
  uint32_t running = 0;
  RunResult res;
  std::unique_ptr<BulkFlow> bulk;
  if (o_.bulk) {
    // The non-ML flow runs the base algorithm (reno for mltcp, ...).
    bulk = std::make_unique<BulkFlow>(MakeFlow(bulk_src, bulk_dst, CcBase(cc_)));
    Simulator::Schedule(MilliSeconds(1), &BulkFlow::Start, bulk.get());
    res.bulk_start_s = 0.001;
  }
  for (uint32_t j = 0; j < plan.size(); j++) {
    const auto& hs = job_hosts[j];
    // Dumbbell: one sender and one receiver.  Leaf-spine: ring all-reduce,
    // worker i sends to worker i+1; each worker sends the profile's bytes
    // (they already include the ring's 2(K-1)/K factor), over `conns`
    // connections.
    std::vector<Ptr<JobFlow>> flows;
    const uint32_t senders = hs.size() == 2 && o_.topology == "dumbbell" ? 1 : hs.size();
    std::set<uint32_t> links;
    for (uint32_t i = 0; i < senders; i++) {
      const uint32_t src = hs[i], dst = hs[(i + 1) % hs.size()];
      for (uint32_t k = 0; k < std::max<uint32_t>(1, plan[j].profile.conns); k++)
        flows.push_back(MakeFlow(src, dst, cc_));
      const uint32_t from = src % o_.leaves, to = dst % o_.leaves;
      if (o_.topology == "leafspine" && from != to) {
        const uint32_t s = SpineFor(dst, o_.seed, o_.spines);
        links.insert(LeafSpineLink(true, from, s, o_.leaves, o_.spines));
        links.insert(LeafSpineLink(false, to, s, o_.leaves, o_.spines));
      }
    }
    if (o_.topology == "leafspine")
      res.job_links.push_back(links);
    JobConfig c;
    c.id = j;
    c.profile = plan[j].profile;
    c.iterations = o_.iterations;
    c.start_offset_s = plan[j].start_offset_s + 0.002;  // after the handshakes
    c.hints = o_.hints || CcIsDcqcn(cc_);
    c.seed = o_.seed;
    c.compute_jitter = o_.compute_jitter;
    c.keep_running = o_.keep_running;
    auto job = CreateObject<TrainingJob>();
    job->Configure(c, flows);
    job->on_finished = [&running, &bulk, &res] {
      if (--running == 0) {
        if (bulk) {
          bulk->Stop();
          res.bulk_end_s = Simulator::Now().GetSeconds();
        }
        Simulator::Stop();
      }
    };
    jobs.push_back(job);
    running++;
  }
  for (auto& j : jobs)
    j->Start();

  // Safety stop: far beyond any sane iteration time.
  double worst = 0;
  for (const auto& p : plan) {
    const double comm = static_cast<double>(p.profile.bytes) * 8 * plan.size() / (o_.link_gbps * 1e9);
    worst = std::max(worst, p.start_offset_s + (p.profile.compute_ms * 1e-3 + comm) * o_.iterations);
  }
  Simulator::Stop(Seconds(20 * worst + 5));
  Simulator::Run();

  res.finished = running == 0;
  if (!res.finished) {
    std::ostringstream os;
    for (auto& f : all_flows_)
      if (f->received() < f->queued())
        os << " flow " << (&f - all_flows_.data()) << " has " << f->received() << "/" << f->queued()
           << " bytes;";
    for (auto& q : fabric_queues_)
      if (q->GetStats().nTotalDroppedPackets)
        os << " fabric queue drops: " << q->GetStats();
    res.stall = os.str();
  }
  res.sim_end_s = Simulator::Now().GetSeconds();
  res.events = Simulator::GetEventCount();
  for (auto& j : jobs) {
    res.records.push_back(j->records());
    res.background.push_back(j->background());
    res.extra_iterations.push_back(j->extra_iterations());
  }
  if (bottleneck_)
    res.bottleneck_bytes = bottleneck_->GetStats().nTotalDequeuedBytes;
  for (auto& q : uplink_queues_)
    res.uplink_bytes += q->GetStats().nTotalDequeuedBytes;
  res.uplinks = static_cast<uint32_t>(uplink_queues_.size());
  for (auto& q : fabric_queues_)
    res.drops += q->GetStats().nTotalDroppedPackets;
  if (bulk)
    res.bulk_bytes = bulk->received();
  for (auto& f : dcqcn_flows_) {
    res.cnps += f->cnps_received();
    res.ce_marks += f->ce_marked();
  }
  jobs.clear();
  bulk.reset();
  dcqcn_flows_.clear();
  all_flows_.clear();
  fabric_queues_.clear();
  uplink_queues_.clear();
  bottleneck_ = nullptr;
  Simulator::Destroy();
  Ipv4AddressGenerator::Reset();
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return res;
}

}  // namespace mltcp_sim
