// SPDX-License-Identifier: GPL-2.0-only
//
// training-job.cc - training-job model and its TCP flows (training-job.h).
#include "training-job.h"

#include <algorithm>
#include <stdexcept>

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/boolean.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"

#include "mltcp-tcp.h"

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("MltcpTrainingJob");
NS_OBJECT_ENSURE_REGISTERED(TrainingJob);

namespace {

constexpr uint32_t kWriteChunk = 1 << 20;  // bytes per Socket::Send call

}  // namespace

CcKind ParseCc(const std::string& name) {
  CcKind cc;
  if (!mltcp::ParseCc(name, &cc))
    throw std::invalid_argument("unknown congestion control '" + name + "' (known: " +
                                mltcp::CcNameList(" ") + ")");
  return cc;
}

Ptr<TcpCongestionOps> MakeCongestionOps(CcKind cc, const mltcp_params& p) {
  switch (cc) {
    case CcKind::kReno: {
      auto c = CreateObject<TcpMltcpReno>();  // the core's Reno with F = 1
      c->SetAttribute("Enabled", BooleanValue(false));
      return c;
    }
    case CcKind::kCubic: {
      auto c = CreateObject<TcpMltcpCubic>();  // the core's CUBIC with F = 1
      c->SetAttribute("Enabled", BooleanValue(false));
      return c;
    }
    case CcKind::kMltcp: {
      auto c = CreateObject<TcpMltcpReno>();
      c->state().SetParams(mltcp::Params(p));
      return c;
    }
    case CcKind::kMltcpCubic: {
      auto c = CreateObject<TcpMltcpCubic>();
      c->state().SetParams(mltcp::Params(p));
      return c;
    }
    default:
      throw std::invalid_argument(std::string("not a TCP congestion control: ") + CcName(cc));
  }
}

// ---------------------------------------------------------------------------
void JobFlow::Received(uint64_t n) {
  received_ += n;
  if (!complete_ && received_ >= queued_) {
    complete_ = true;
    if (on_complete)
      on_complete();
  }
}

TcpJobFlow::TcpJobFlow(Ptr<Node> src, Ptr<Node> dst, Ipv4Address dst_addr,
                       const TcpFlowConfig& cfg)
    : cc_(MakeCongestionOps(cfg.cc, cfg.mltcp)) {
  listen_ = Socket::CreateSocket(dst, TcpSocketFactory::GetTypeId());
  listen_->Bind(InetSocketAddress(Ipv4Address::GetAny(), cfg.port));
  listen_->Listen();
  listen_->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeCallback(&TcpJobFlow::OnAccept, this));

  tx_ = Socket::CreateSocket(src, TcpSocketFactory::GetTypeId());
  DynamicCast<TcpSocketBase>(tx_)->SetCongestionControlAlgorithm(cc_);
  tx_->Bind();
  tx_->SetSendCallback(MakeCallback(&TcpJobFlow::OnTxSpace, this));
  // Connect once the simulation runs (nodes are initialised then).
  const InetSocketAddress to(dst_addr, cfg.port);
  Simulator::ScheduleWithContext(src->GetId(), Seconds(0), [this, to] { tx_->Connect(to); });
}

void TcpJobFlow::OnAccept(Ptr<Socket> s, const Address&) {
  s->SetRecvCallback(MakeCallback(&TcpJobFlow::OnRecv, this));
}

void TcpJobFlow::OnRecv(Ptr<Socket> s) {
  while (Ptr<Packet> p = s->Recv())
    Received(p->GetSize());
}

void TcpJobFlow::OnTxSpace(Ptr<Socket>, uint32_t) { Push(); }

void TcpJobFlow::Send(uint64_t bytes) {
  if (bytes == 0)
    return;
  queued_ += bytes;
  pending_ += bytes;
  complete_ = false;
  Push();
}

void TcpJobFlow::Hint(uint64_t bytes) { MltcpHint(cc_, bytes); }

void TcpJobFlow::Push() {
  while (pending_ > 0) {
    const uint32_t room = tx_->GetTxAvailable();
    if (room == 0)
      return;
    const uint32_t n = static_cast<uint32_t>(
        std::min<uint64_t>({pending_, static_cast<uint64_t>(room), kWriteChunk}));
    const int sent = tx_->Send(Create<Packet>(n));
    if (sent <= 0)
      return;  // not connected yet: the send callback retries
    pending_ -= static_cast<uint64_t>(sent);
  }
}

// ---------------------------------------------------------------------------
TypeId TrainingJob::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::MltcpTrainingJob").SetParent<Object>().AddConstructor<TrainingJob>();
  return tid;
}

void TrainingJob::Configure(const JobConfig& cfg, std::vector<Ptr<JobFlow>> flows) {
  cfg_ = cfg;
  flows_ = std::move(flows);
  rng_ = CreateObject<UniformRandomVariable>();
  rng_->SetStream(static_cast<int64_t>(cfg.seed) * 1000 + cfg.id);
  for (auto& f : flows_)
    f->on_complete = [this] { FlowComplete(); };
}

void TrainingJob::Start() {
  running_ = true;
  Simulator::Schedule(Seconds(cfg_.start_offset_s), &TrainingJob::BeginIteration, this);
}

// profiles/README.md, "Iteration semantics": compute, then communicate; an
// async (Dorylus-like) job starts computing iteration i+1 when the
// communication of iteration i starts, so its next communication may follow
// the previous one without an idle gap.
void TrainingJob::BeginIteration() {
  cur_ = IterationRecord();
  cur_.job = cfg_.id;
  cur_.iter = next_iter_++;
  cur_.start_s = Simulator::Now().GetSeconds();
  comm_done_ = false;
  double compute_s = cfg_.profile.compute_ms * 1e-3;
  if (cfg_.compute_jitter > 0)
    compute_s *= 1.0 + cfg_.compute_jitter * (2.0 * rng_->GetValue() - 1.0);
  double until_s = cur_.start_s + compute_s;
  if (cfg_.profile.async && last_comm_start_s_ >= 0)
    until_s = std::max(cur_.start_s, last_comm_start_s_ + compute_s);
  Simulator::Schedule(Seconds(until_s - cur_.start_s), &TrainingJob::BeginComm, this);
}

void TrainingJob::BeginComm() {
  cur_.comm_start_s = Simulator::Now().GetSeconds();
  in_comm_ = true;
  last_comm_start_s_ = cur_.comm_start_s;
  iter_bytes_ = mltcp_sim::IterationBytes(cfg_.profile, cur_.iter);
  cur_.bytes = iter_bytes_;
  flows_pending_ = static_cast<uint32_t>(flows_.size());
  const uint32_t conns = std::max<uint32_t>(1, cfg_.profile.conns);
  if (cfg_.hints)
    for (size_t i = 0; i < flows_.size(); i++)
      flows_[i]->Hint(mltcp_sim::SplitShare(iter_bytes_, conns, static_cast<uint32_t>(i % conns)));
  const uint32_t buckets = std::max<uint32_t>(1, cfg_.profile.buckets);
  for (uint32_t k = 0; k < buckets; k++) {
    const Time at = MicroSeconds(static_cast<int64_t>(k * cfg_.profile.bucket_gap_us));
    if (k == 0)
      ReleaseBucket(0);
    else
      Simulator::Schedule(at, &TrainingJob::ReleaseBucket, this, k);
  }
}

void TrainingJob::ReleaseBucket(uint32_t k) {
  // Buckets first, then each bucket across the connections (README.md).
  const uint32_t buckets = std::max<uint32_t>(1, cfg_.profile.buckets);
  const uint32_t conns = std::max<uint32_t>(1, cfg_.profile.conns);
  const uint64_t bucket = mltcp_sim::SplitShare(iter_bytes_, buckets, k);
  for (size_t i = 0; i < flows_.size(); i++)
    flows_[i]->Send(mltcp_sim::SplitShare(bucket, conns, static_cast<uint32_t>(i % conns)));
}

void TrainingJob::FlowComplete() {
  if (flows_pending_ == 0)
    return;
  // A flow may complete a bucket before later buckets are released: the
  // phase is over only when every flow holds every byte of the iteration.
  for (auto& f : flows_)
    if (f->received() < f->queued())
      return;
  const uint32_t buckets = std::max<uint32_t>(1, cfg_.profile.buckets);
  const double last_bucket_s = cur_.comm_start_s + (buckets - 1) * cfg_.profile.bucket_gap_us * 1e-6;
  if (Simulator::Now().GetSeconds() + 1e-12 < last_bucket_s)
    return;
  flows_pending_ = 0;
  cur_.comm_end_s = Simulator::Now().GetSeconds();
  in_comm_ = false;
  comm_done_ = true;
  MaybeEndIteration();
}

void TrainingJob::MaybeEndIteration() {
  if (!comm_done_)
    return;
  cur_.end_s = Simulator::Now().GetSeconds();
  if (records_.size() < cfg_.iterations)
    records_.push_back(cur_);
  else
    extra_.push_back(cur_);
  comm_done_ = false;
  if (records_.size() >= cfg_.iterations && !notified_) {
    notified_ = true;
    if (!cfg_.keep_running)
      running_ = false;
    // May stop the simulator; a keep_running job's next iteration is then
    // scheduled but never runs.
    if (on_finished)
      on_finished();
  }
  if (running_)
    BeginIteration();
}

std::vector<std::pair<double, double>> TrainingJob::background() const {
  std::vector<std::pair<double, double>> out;
  for (const auto& r : extra_)
    out.emplace_back(r.comm_start_s, r.comm_end_s);
  if (in_comm_ && records_.size() >= cfg_.iterations)
    out.emplace_back(cur_.comm_start_s, Simulator::Now().GetSeconds());
  return out;
}

}  // namespace ns3
