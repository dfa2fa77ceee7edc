// SPDX-License-Identifier: GPL-2.0-only
//
// training-job.h - the data-parallel training job of the host emulator, in
// ns-3: per iteration a compute phase (no traffic), then a communication
// phase in which each of the job's flows delivers its bytes; the phase ends
// when every receiver holds all of them (as an all-reduce completes).
// Buckets release the bytes in pieces with gaps (PyTorch DDP); a TAG-like
// job varies its bytes per iteration (bytes_cycle); a Dorylus-like (async)
// job computes iteration i+1 while iteration i communicates, so its flows
// need not go idle between iterations.  Semantics: profiles/README.md.
//
// A flow is either TCP (any ns-3 congestion ops; MLTCP ones get hints in
// hint mode) or RoCE-like with DCQCN (mltcp-dcqcn.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ns3/ipv4-address.h"
#include "ns3/node.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/socket.h"
#include "ns3/tcp-congestion-ops.h"

#include "mltcp.hpp"
#include "sim-profile.h"

namespace ns3 {

class DcqcnFlow;

enum class CcKind { kReno, kCubic, kMltcpReno, kMltcpCubic, kDcqcn, kMltcpDcqcn };

// "reno" -> kReno ...; throws std::invalid_argument naming the known ones.
CcKind ParseCc(const std::string& name);
const char* CcName(CcKind cc);
bool CcIsDcqcn(CcKind cc);
bool CcIsMltcp(CcKind cc);
// The congestion control of the non-MLTCP base: mltcp -> reno, ...
CcKind CcBase(CcKind cc);

struct IterationRecord {
  uint32_t job = 0;
  uint32_t iter = 0;
  double start_s = 0;       // iteration (compute) start
  double comm_start_s = 0;  // first byte released
  double comm_end_s = 0;    // last receiver complete
  double end_s = 0;         // iteration end
  uint64_t bytes = 0;       // bytes per flow this iteration
};

// One sender->receiver byte stream that lives for the whole job.
class JobFlow : public SimpleRefCount<JobFlow> {
 public:
  virtual ~JobFlow() = default;
  // Queue `bytes` more; `done` runs when the receiver holds all queued bytes.
  virtual void Send(uint64_t bytes) = 0;
  // An iteration of `bytes` starts now (MLTCP hint mode).
  virtual void Hint(uint64_t bytes) = 0;
  uint64_t queued() const { return queued_; }
  uint64_t received() const { return received_; }
  std::function<void()> on_complete;

 protected:
  void Received(uint64_t n);
  uint64_t queued_ = 0;
  uint64_t received_ = 0;
  bool complete_ = true;
};

struct TcpFlowConfig {
  CcKind cc = CcKind::kReno;
  mltcp_params mltcp{};
  uint16_t port = 0;
};

// A persistent TCP connection: listener on dst, sender on src.
class TcpJobFlow : public JobFlow {
 public:
  TcpJobFlow(Ptr<Node> src, Ptr<Node> dst, Ipv4Address dst_addr, const TcpFlowConfig& cfg);
  void Send(uint64_t bytes) override;
  void Hint(uint64_t bytes) override;
  Ptr<TcpCongestionOps> cc() const { return cc_; }

 private:
  void Push();
  void OnAccept(Ptr<Socket> s, const Address& from);
  void OnRecv(Ptr<Socket> s);
  void OnTxSpace(Ptr<Socket> s, uint32_t avail);

  Ptr<Socket> tx_, listen_;
  Ptr<TcpCongestionOps> cc_;
  uint64_t pending_ = 0;  // queued but not yet written to the socket
};

Ptr<TcpCongestionOps> MakeCongestionOps(CcKind cc, const mltcp_params& p);

struct JobConfig {
  uint32_t id = 0;
  mltcp_sim::JobProfile profile;  // bytes already scaled to the link
  // flows[f] carries connection f % profile.conns of its worker.
  uint32_t iterations = 10;
  double start_offset_s = 0;
  bool hints = false;
  uint32_t seed = 1;
  double compute_jitter = 0;  // compute time uniform in (1 +- jitter)
  // After its `iterations` recorded iterations the job signals on_finished
  // and, with keep_running, goes on iterating (unrecorded: background())
  // until the simulation stops, so it keeps contending with slower jobs.
  bool keep_running = false;
};

class TrainingJob : public Object {
 public:
  static TypeId GetTypeId();
  TrainingJob() = default;
  void Configure(const JobConfig& cfg, std::vector<Ptr<JobFlow>> flows);
  void Start();
  // Every recorded iteration done (a keep_running job may still iterate).
  bool finished() const { return records_.size() >= cfg_.iterations; }
  // The first `iterations` iterations.
  const std::vector<IterationRecord>& records() const { return records_; }
  // keep_running: the communication phases after the recorded iterations,
  // (comm_start_s, comm_end_s), the one still in progress ending now.
  std::vector<std::pair<double, double>> background() const;
  // keep_running: iterations completed after the recorded ones.
  size_t extra_iterations() const { return extra_.size(); }
  const JobConfig& config() const { return cfg_; }
  std::function<void()> on_finished;

 private:
  void BeginIteration();
  void BeginComm();
  void ReleaseBucket(uint32_t k);
  void FlowComplete();
  void MaybeEndIteration();

  JobConfig cfg_;
  std::vector<Ptr<JobFlow>> flows_;
  std::vector<IterationRecord> records_;
  std::vector<IterationRecord> extra_;  // keep_running: after records_
  IterationRecord cur_;
  uint32_t next_iter_ = 0;
  Ptr<UniformRandomVariable> rng_;
  uint64_t iter_bytes_ = 0;
  double last_comm_start_s_ = -1;  // async: the previous communication start
  uint32_t flows_pending_ = 0;
  bool comm_done_ = false;
  bool in_comm_ = false;  // cur_'s communication phase is under way
  bool running_ = false;
  bool notified_ = false;  // on_finished has run
};

}  // namespace ns3
