// SPDX-License-Identifier: GPL-2.0-only
//
// mltcp-sim.cc - the MLTCP ns-3 scenario: N training jobs on a dumbbell (one
// bottleneck) or a two-tier leaf-spine with per-flow ECMP, with Reno, CUBIC
// or DCQCN as the base algorithm, with or without MLTCP.  Each job is also
// run alone (same topology, same congestion control) in the same invocation,
// so every iteration time is reported as a ratio to the isolated one.
// Output: per-iteration CSV, JSON summary, and a RESULT line on stdout.
// Every job keeps running (and contending) until the slowest job has done
// --iterations; only each job's first --iterations are recorded, so a job
// with a short period never leaves the others to run alone in the measured
// iterations (--stop-when-done: each job stops after its own, as the host
// emulator does).
//
// Scale: ns-3 here delivers ~10-15 k segments per wall second, so the
// scenario uses jumbo frames (MTU 9000 by default) and sizes bytes with the
// link rate (profile bytes are for 200 Mbit/s; --time-scale shrinks compute
// time and bytes together), keeping each job's communication fraction.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "mltcp-dcqcn.h"
#include "mltcp-tcp.h"
#include "profile.h"
#include "training-job.h"

#ifndef MLTCP_SIM_PROFILES
#define MLTCP_SIM_PROFILES "profiles/jobs.prof,sim/sim.prof"
#endif

using namespace ns3;
using mltcp_sim::JobProfile;

namespace {

// ---------------------------------------------------------------------------
// Options.
struct Options {
  uint32_t jobs = 0;  // 0: one per mix entry
  double link_gbps = 1.0;
  std::string cc = "mltcp";
  std::string mix = "vgg16";
  uint32_t ring_workers = 2;
  std::string profiles = MLTCP_SIM_PROFILES;
  uint32_t seed = 1;
  uint32_t iterations = 10;
  int warmup = -1;  // -1: iterations / 5
  std::string topology = "dumbbell";
  uint32_t leaves = 4, spines = 2;
  double time_scale = 1.0;
  double rtt_us = 60;
  uint32_t mtu = 9000;
  uint32_t queue_pkts = 0;  // 0: automatic
  double access_factor = 0;  // 0: 4 for TCP, 1 for DCQCN
  double start_spread_ms = 0;
  double start_gap_ms = 0;
  double compute_jitter = 0;
  bool hints = false;
  bool isolated = true;
  bool bulk = false;
  bool keep_running = true;  // --stop-when-done clears it
  uint32_t slope = MLTCP_DEF_SLOPE;
  bool scale_decrease = true;
  uint32_t intercept = MLTCP_DEF_INTERCEPT;
  double min_rto_ms = 10;
  uint32_t red_kmin = 0, red_kmax = 0;  // packets; 0: automatic
  double red_pmax = 0.2;
  double dcqcn_idle_reset_us = 0;
  uint64_t dcqcn_byte_counter = 150000;  // at 40 Gbit/s (the paper's 150 KB)
  std::string out;  // output prefix; empty: no files
  bool quiet = false;
};

const char* kUsage =
    "usage: mltcp-sim [options]\n"
    "  N training jobs share a dumbbell bottleneck (or a leaf-spine) in ns-3;\n"
    "  each job is also run alone; prints mean/p99 iteration time ratios.\n"
    "  --jobs N               number of jobs (default: one per --profile-mix entry;\n"
    "                         with N given, the mix is repeated to N jobs)\n"
    "  --link-gbps R          bottleneck / fabric link rate (default 1)\n"
    "  --cc C                 reno|cubic|mltcp|mltcp_cubic|dcqcn|mltcp_dcqcn (default mltcp)\n"
    "  --profile-mix M        e.g. vgg16:2,resnet50 (names from --profiles; default vgg16);\n"
    "                         a bulk=1 profile adds the long-lived flow of --bulk\n"
    "  --profiles F1,F2       profile files, shared format of profiles/README.md\n"
    "                         (default " MLTCP_SIM_PROFILES ")\n"
    "                         bytes are for 200 Mbit/s and scaled to --link-gbps\n"
    "  --ring-workers K       leaf-spine: workers per job in a ring (default 2)\n"
    "  --seed S               random seed (start offsets, compute jitter, ECMP hash; default 1)\n"
    "  --iterations I         iterations per job (default 10)\n"
    "  --warmup W             iterations excluded from mean/p99 (default iterations/5)\n"
    "  --topology T           dumbbell|leafspine (default dumbbell)\n"
    "  --leaves L --spines S  leaf-spine size (default 4 and 2)\n"
    "  --time-scale X         multiply compute time and bytes by X (default 1)\n"
    "  --rtt-us U             base round-trip time in microseconds (default 60)\n"
    "  --mtu B                link MTU in bytes (default 9000)\n"
    "  --queue-pkts Q         bottleneck queue for TCP (default: 2 BDP, at least 32)\n"
    "  --access-factor F      host link rate / fabric rate (default 4 for TCP, 1 for\n"
    "                         DCQCN; also the DCQCN line rate)\n"
    "  --start-spread-ms D    job start offsets uniform in [0, D] (default 0: together)\n"
    "  --start-gap-ms G       job j starts j*G ms late (added to the spread)\n"
    "  --compute-jitter J     compute time uniform in (1 +- J) (default 0)\n"
    "  --stop-when-done       each job stops after its --iterations (the host\n"
    "                         emulator's behaviour), so a job with a short period\n"
    "                         finishes early and the others' later iterations run\n"
    "                         alone; default: every job keeps running, unrecorded,\n"
    "                         until every job has done --iterations, so all recorded\n"
    "                         iterations run under the mix's contention\n"
    "  --hints                MLTCP flows get iteration hints instead of detecting\n"
    "  --no-isolated          skip the isolated runs (no ratios)\n"
    "  --bulk                 add a long-lived non-ML flow (base algorithm)\n"
    "  --slope N --intercept N   MLTCP F in units of 1/1024 (default 1536 and 256)\n"
    "  --no-scale-decrease    MLTCP TCP losses keep the base's beta (default: beta * F)\n"
    "  --min-rto-ms M         TCP minimum RTO (default 10)\n"
    "  --red-kmin K --red-kmax K --red-pmax P   DCQCN ECN marking (packets)\n"
    "  --dcqcn-idle-reset-us U  a DCQCN sender idle for U us restarts at line rate\n"
    "                         (default 0: never; the core's catch-up bounds recovery)\n"
    "  --dcqcn-byte-counter B  DCQCN byte counter at 40 Gbit/s, scaled to the line\n"
    "                         (default 150K, one of the paper's; the core's default is 10M)\n"
    "  --out PREFIX           write PREFIX.csv (per iteration) and PREFIX.json\n"
    "  --quiet                only the RESULT line\n"
    "  --help                 this text\n";

[[noreturn]] void Fail(const std::string& msg) {
  std::cerr << "mltcp-sim: " << msg << "\n";
  std::exit(2);
}

double NumberArg(const std::string& opt, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(d))
    Fail(opt + ": '" + v + "' is not a number");
  if (d < lo || d > hi) {
    std::ostringstream os;
    os << opt << ": " << v << " is out of range [" << lo << ", " << hi << "]";
    Fail(os.str());
  }
  return d;
}

uint32_t IntArg(const std::string& opt, const std::string& v, double lo, double hi) {
  const double d = NumberArg(opt, v, lo, hi);
  if (d != std::floor(d))
    Fail(opt + ": '" + v + "' is not an integer");
  return static_cast<uint32_t>(d);
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (a.rfind("--", 0) != 0)
      Fail("unexpected argument '" + a + "' (see --help)");
    std::string v;
    bool has_v = false;
    const auto eq = a.find('=');
    if (eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_v = true;
    }
    auto flag = [&](bool& f) {
      if (has_v)
        Fail(a + " takes no value");
      f = true;
    };
    auto val = [&]() -> std::string {
      if (has_v)
        return v;
      if (i + 1 >= argc)
        Fail(a + " needs a value (see --help)");
      return argv[++i];
    };
    if (a == "--jobs") o.jobs = IntArg(a, val(), 1, 4096);
    else if (a == "--link-gbps") o.link_gbps = NumberArg(a, val(), 0.001, 1600);
    else if (a == "--cc") o.cc = val();
    else if (a == "--profile-mix") o.mix = val();
    else if (a == "--profiles") o.profiles = val();
    else if (a == "--seed") o.seed = IntArg(a, val(), 0, 4e9);
    else if (a == "--iterations") o.iterations = IntArg(a, val(), 1, 100000);
    else if (a == "--warmup") o.warmup = static_cast<int>(IntArg(a, val(), 0, 100000));
    else if (a == "--topology") o.topology = val();
    else if (a == "--ring-workers") o.ring_workers = IntArg(a, val(), 2, 1024);
    else if (a == "--leaves") o.leaves = IntArg(a, val(), 2, 256);
    else if (a == "--spines") o.spines = IntArg(a, val(), 1, 64);
    else if (a == "--time-scale") o.time_scale = NumberArg(a, val(), 1e-4, 1e4);
    else if (a == "--rtt-us") o.rtt_us = NumberArg(a, val(), 1, 1e7);
    else if (a == "--mtu") o.mtu = IntArg(a, val(), 576, 9000);
    else if (a == "--queue-pkts") o.queue_pkts = IntArg(a, val(), 2, 1e6);
    else if (a == "--access-factor") o.access_factor = NumberArg(a, val(), 1, 100);
    else if (a == "--start-spread-ms") o.start_spread_ms = NumberArg(a, val(), 0, 1e7);
    else if (a == "--start-gap-ms") o.start_gap_ms = NumberArg(a, val(), 0, 1e7);
    else if (a == "--compute-jitter") o.compute_jitter = NumberArg(a, val(), 0, 0.9);
    else if (a == "--hints") flag(o.hints);
    else if (a == "--no-isolated") { bool f = false; flag(f); o.isolated = false; }
    else if (a == "--bulk") flag(o.bulk);
    else if (a == "--stop-when-done") { bool f = false; flag(f); o.keep_running = false; }
    else if (a == "--no-scale-decrease") { bool f = false; flag(f); o.scale_decrease = false; }
    else if (a == "--slope") o.slope = IntArg(a, val(), 0, MLTCP_SLOPE_MAX);
    else if (a == "--intercept") o.intercept = IntArg(a, val(), MLTCP_INTERCEPT_MIN, MLTCP_INTERCEPT_MAX);
    else if (a == "--min-rto-ms") o.min_rto_ms = NumberArg(a, val(), 0.1, 10000);
    else if (a == "--red-kmin") o.red_kmin = IntArg(a, val(), 1, 1e6);
    else if (a == "--red-kmax") o.red_kmax = IntArg(a, val(), 1, 1e6);
    else if (a == "--red-pmax") o.red_pmax = NumberArg(a, val(), 1e-4, 1);
    else if (a == "--dcqcn-idle-reset-us") o.dcqcn_idle_reset_us = NumberArg(a, val(), 0, 1e9);
    else if (a == "--dcqcn-byte-counter") {
      try {
        o.dcqcn_byte_counter = mltcp_sim::ParseBytes(val());
      } catch (const std::exception& e) {
        Fail(std::string("--dcqcn-byte-counter: ") + e.what());
      }
    }
    else if (a == "--out") o.out = val();
    else if (a == "--quiet") flag(o.quiet);
    else Fail("unknown option '" + a + "' (see --help)");
  }
  if (o.topology != "dumbbell" && o.topology != "leafspine")
    Fail("--topology: unknown '" + o.topology + "' (known: dumbbell leafspine)");
  if (o.red_kmin && o.red_kmax && o.red_kmin >= o.red_kmax)
    Fail("--red-kmin must be below --red-kmax");
  if (o.warmup >= 0 && static_cast<uint32_t>(o.warmup) >= o.iterations)
    Fail("--warmup must be below --iterations");
  return o;
}

// ---------------------------------------------------------------------------
// One simulation: a set of jobs (and maybe a bulk flow) on a topology.
struct JobPlan {
  JobProfile profile;  // scaled
  double start_offset_s = 0;
};

struct RunResult {
  std::vector<std::vector<IterationRecord>> records;  // per job
  // Per job: communication phases after its recorded iterations (it kept
  // running until the slowest job was done; Options::keep_running).
  std::vector<std::vector<std::pair<double, double>>> background;
  std::vector<size_t> extra_iterations;  // per job: iterations after those
  bool finished = false;
  double sim_end_s = 0;
  double wall_s = 0;
  uint64_t events = 0;
  uint64_t bottleneck_bytes = 0;  // dumbbell: bytes through the bottleneck
  uint64_t uplink_bytes = 0;      // leaf-spine: bytes on leaf -> spine links
  uint32_t uplinks = 0;
  uint64_t drops = 0;             // packets dropped in fabric queues
  uint64_t bulk_bytes = 0;
  double bulk_start_s = 0, bulk_end_s = 0;
  uint64_t cnps = 0, ce_marks = 0;
  std::string stall;  // what was still missing when a run did not finish
  // Leaf-spine: the fabric links (LeafSpineLink ids) each job's flows cross;
  // empty for the dumbbell, whose jobs all share the bottleneck.
  std::vector<std::set<uint32_t>> job_links;
};

// Leaf-spine routing: traffic to host h leaves any other leaf through spine
// SpineFor(h) (per-destination hashing; see BuildLeafSpine).
uint32_t SpineFor(uint32_t host, uint64_t seed, uint32_t spines) {
  uint64_t x = (static_cast<uint64_t>(host) + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 31;
  return static_cast<uint32_t>(x % spines);
}

// Ids of the directed fabric links: leaf l -> spine s, then spine s -> leaf l.
uint32_t LeafSpineLink(bool up, uint32_t leaf, uint32_t spine, uint32_t leaves, uint32_t spines) {
  return up ? leaf * spines + spine : leaves * spines + spine * leaves + leaf;
}

class Scenario {
 public:
  Scenario(const Options& o, CcKind cc) : o_(o), cc_(cc) {}
  RunResult Run(const std::vector<JobPlan>& plan);

 private:
  void Configure();
  void BuildDumbbell(uint32_t hosts);
  void BuildLeafSpine(uint32_t hosts);
  NetDeviceContainer Link(Ptr<Node> a, Ptr<Node> b, double gbps, bool queue_a, bool queue_b);
  void InstallFabricQueue(Ptr<NetDevice> dev);
  Ptr<JobFlow> MakeFlow(uint32_t src, uint32_t dst, CcKind cc);
  uint32_t QueuePkts() const;
  uint64_t AccessBps() const {
    double factor = o_.access_factor;
    if (factor == 0)  // DCQCN's lossless fabrics run hosts at the fabric's rate
      factor = CcIsDcqcn(cc_) ? 1.0 : 4.0;
    return static_cast<uint64_t>(o_.link_gbps * 1e9 * factor);
  }

  const Options& o_;
  CcKind cc_;
  NodeContainer hosts_, switches_;
  std::vector<Ipv4Address> host_addr_;
  std::vector<Ptr<QueueDisc>> fabric_queues_;
  Ptr<QueueDisc> bottleneck_;
  std::vector<Ptr<QueueDisc>> uplink_queues_;  // leaf-spine: leaf -> spine
  std::vector<Ptr<DcqcnFlow>> dcqcn_flows_;
  std::vector<Ptr<JobFlow>> all_flows_;
  uint16_t next_port_ = 5000;
  uint32_t next_subnet_ = 0;
};

uint32_t Scenario::QueuePkts() const {
  if (o_.queue_pkts)
    return o_.queue_pkts;
  const double bdp_bytes = o_.link_gbps * 1e9 / 8 * o_.rtt_us * 1e-6;
  return std::max<uint32_t>(32, static_cast<uint32_t>(2 * bdp_bytes / o_.mtu));
}

void Scenario::Configure() {
  const uint32_t seg = o_.mtu - 52;  // IPv4 20 + TCP 20 + timestamps 12
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(seg));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1u << 28));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1u << 26));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MicroSeconds(
                                                        static_cast<int64_t>(o_.min_rto_ms * 1000))));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(100)));
  RngSeedManager::SetSeed(std::max<uint32_t>(1, o_.seed));
  RngSeedManager::SetRun(1);
}

// queue_a / queue_b: the device of a / b gets the fabric queue disc (FIFO
// or RED/ECN) instead of the default pfifo_fast.
NetDeviceContainer Scenario::Link(Ptr<Node> a, Ptr<Node> b, double gbps, bool queue_a,
                                  bool queue_b) {
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(gbps * 1e9))));
  p2p.SetDeviceAttribute("Mtu", UintegerValue(o_.mtu));
  // 3 hops each way on the dumbbell (host-switch-switch-host), 4 on the
  // leaf-spine's cross-rack path: a per-hop delay that gives --rtt-us.
  const double hops = o_.topology == "dumbbell" ? 3 : 4;
  p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(
                                       static_cast<int64_t>(o_.rtt_us * 1000 / (2 * hops)))));
  // The device queue is a one-packet staging slot: queueing happens in the
  // queue disc above it, where FIFO limits and ECN marking apply.
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
  NetDeviceContainer d = p2p.Install(a, b);
  if (queue_a)
    InstallFabricQueue(d.Get(0));
  if (queue_b)
    InstallFabricQueue(d.Get(1));
  Ipv4AddressHelper ip;
  const uint32_t net = 0x0a000000u + (next_subnet_++ << 2);  // 10.0.0.0/8 in /30s
  ip.SetBase(Ipv4Address(net), Ipv4Mask("255.255.255.252"));
  ip.Assign(d);
  return d;
}

void Scenario::InstallFabricQueue(Ptr<NetDevice> dev) {
  TrafficControlHelper tch;
  if (CcIsDcqcn(cc_)) {
    // RED as an ECN marker on the instantaneous queue (QW = 1): probability
    // 0 below K_min, rising to P_max at K_max; deep buffer, no hard drops.
    const uint32_t kmin = o_.red_kmin ? o_.red_kmin : 4;
    const uint32_t kmax = o_.red_kmax ? o_.red_kmax : 32;
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "UseEcn", BooleanValue(true), "UseHardDrop",
                         BooleanValue(false), "Gentle", BooleanValue(true), "QW", DoubleValue(1.0),
                         "MinTh", DoubleValue(kmin), "MaxTh", DoubleValue(kmax), "LInterm",
                         DoubleValue(1.0 / o_.red_pmax), "MeanPktSize", UintegerValue(o_.mtu),
                         "MaxSize", QueueSizeValue(QueueSize("100000p")));
  } else {
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                         QueueSizeValue(QueueSize(std::to_string(QueuePkts()) + "p")));
  }
  QueueDiscContainer q = tch.Install(dev);
  fabric_queues_.push_back(q.Get(0));
}

void Scenario::BuildDumbbell(uint32_t hosts) {
  // Senders (even host ids) on the left switch, receivers (odd) on the right.
  switches_.Create(2);
  hosts_.Create(hosts);
  InternetStackHelper stack;
  stack.Install(switches_);
  stack.Install(hosts_);
  Link(switches_.Get(0), switches_.Get(1), o_.link_gbps, true, true);
  bottleneck_ = fabric_queues_.front();  // left to right
  for (uint32_t h = 0; h < hosts; h++) {
    Link(hosts_.Get(h), switches_.Get(h % 2), static_cast<double>(AccessBps()) / 1e9, false, true);
    host_addr_.push_back(hosts_.Get(h)->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal());
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
}

void Scenario::BuildLeafSpine(uint32_t hosts) {
  // Hosts spread round-robin over leaves (a job's workers land in different
  // racks); every leaf connects to every spine at the fabric rate.
  const uint32_t leaves = o_.leaves, spines = o_.spines;
  switches_.Create(leaves + spines);
  hosts_.Create(hosts);
  InternetStackHelper stack;
  stack.Install(switches_);
  stack.Install(hosts_);
  std::vector<std::vector<NetDeviceContainer>> up(leaves);
  for (uint32_t l = 0; l < leaves; l++)
    for (uint32_t s = 0; s < spines; s++) {
      up[l].push_back(Link(switches_.Get(l), switches_.Get(leaves + s), o_.link_gbps, true, true));
      uplink_queues_.push_back(fabric_queues_[fabric_queues_.size() - 2]);  // leaf -> spine
    }
  for (uint32_t h = 0; h < hosts; h++) {
    Link(hosts_.Get(h), switches_.Get(h % leaves), static_cast<double>(AccessBps()) / 1e9, false,
         true);
    host_addr_.push_back(hosts_.Get(h)->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal());
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  // Per-flow ECMP.  ns-3's global routing either takes one path or, with
  // RandomEcmpRouting, sprays packets (reordering TCP).  Instead every leaf
  // gets a static /32 route per remote host through spine hash(host, seed):
  // a ring sends exactly one flow to each worker, so per-destination
  // hashing is per-flow hashing here, and a flow never changes path.
  // Static routes take precedence over global ones (list routing priority).
  Ipv4StaticRoutingHelper srh;
  for (uint32_t l = 0; l < leaves; l++) {
    Ptr<Ipv4> ipv4 = switches_.Get(l)->GetObject<Ipv4>();
    Ptr<Ipv4StaticRouting> rt = srh.GetStaticRouting(ipv4);
    for (uint32_t h = 0; h < hosts; h++) {
      if (h % leaves == l)
        continue;
      const uint32_t s = SpineFor(h, o_.seed, spines);
      const NetDeviceContainer& d = up[l][s];
      Ptr<Ipv4> spine = switches_.Get(leaves + s)->GetObject<Ipv4>();
      const Ipv4Address next_hop =
          spine->GetAddress(spine->GetInterfaceForDevice(d.Get(1)), 0).GetLocal();
      rt->AddHostRouteTo(host_addr_[h], next_hop, ipv4->GetInterfaceForDevice(d.Get(0)));
    }
  }
}

Ptr<JobFlow> Scenario::MakeFlow(uint32_t src, uint32_t dst, CcKind cc) {
  const uint16_t port = next_port_++;
  if (CcIsDcqcn(cc)) {
    DcqcnFlowConfig c;
    c.dcqcn = DcqcnParamsForLine(AccessBps(), o_.dcqcn_byte_counter);
    mltcp_params_default(&c.mltcp);
    c.mltcp.slope = o_.slope;
    c.mltcp.intercept = o_.intercept;
    c.use_mltcp = CcIsMltcp(cc);
    c.port = port;
    c.cnp_port = static_cast<uint16_t>(port + 20000);
    c.payload = o_.mtu - 28;
    c.idle_reset_us = static_cast<uint64_t>(o_.dcqcn_idle_reset_us);
    auto f = Create<DcqcnFlow>(hosts_.Get(src), host_addr_[src], hosts_.Get(dst), host_addr_[dst], c);
    dcqcn_flows_.push_back(f);
    all_flows_.push_back(f);
    return f;
  }
  TcpFlowConfig c;
  c.cc = cc;
  mltcp_params_default(&c.mltcp);
  c.mltcp.slope = o_.slope;
  c.mltcp.intercept = o_.intercept;
  c.mltcp.scale_decrease = o_.scale_decrease ? 1 : 0;
  c.port = port;
  auto f = Create<TcpJobFlow>(hosts_.Get(src), hosts_.Get(dst), host_addr_[dst], c);
  all_flows_.push_back(f);
  return f;
}

// Bulk (non-ML) flow: keeps its socket full from t = 0 until the jobs end.
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

// ---------------------------------------------------------------------------
// Statistics.
struct JobStats {
  double mean_s = 0, p99_s = 0;
  double iso_mean_s = 0;
  double mean_ratio = 0, p99_ratio = 0;
};

double Percentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::vector<double> IterTimes(const std::vector<IterationRecord>& r, uint32_t warmup) {
  std::vector<double> t;
  for (size_t i = warmup; i < r.size(); i++)
    t.push_back(r[i].end_s - r[i].start_s);
  return t;
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Fraction of [a, b] covered by the union of `others`.
double Covered(double a, double b, std::vector<std::pair<double, double>> others) {
  std::sort(others.begin(), others.end());
  double covered = 0, cur = a;
  for (const auto& iv : others) {
    const double lo = std::max(iv.first, cur), hi = std::min(iv.second, b);
    if (hi > lo) {
      covered += hi - lo;
      cur = hi;
    }
  }
  return b > a ? covered / (b - a) : 0;
}

// Per job and iteration: the share of its communication phase that overlaps
// the communication of another job it contends with.  The schedule is
// interleaved from iteration k on when every job's iterations from k on
// overlap by less than 10%.  Dumbbell: every job contends with every other
// (one bottleneck); leaf-spine: jobs contend when their flows cross a common
// fabric link (hosts are never shared), so jobs on disjoint paths may
// overlap in time freely.
constexpr double kInterleavedOverlap = 0.10;

bool Contend(const RunResult& r, size_t a, size_t b) {
  if (r.job_links.empty())
    return true;
  for (uint32_t l : r.job_links[a])
    if (r.job_links[b].count(l))
      return true;
  return false;
}

std::vector<std::vector<double>> Overlaps(const RunResult& res) {
  const auto& recs = res.records;
  std::vector<std::vector<double>> out(recs.size());
  for (size_t j = 0; j < recs.size(); j++) {
    for (const auto& r : recs[j]) {
      std::vector<std::pair<double, double>> others;
      for (size_t k = 0; k < recs.size(); k++) {
        if (k == j || !Contend(res, j, k))
          continue;
        for (const auto& o : recs[k])
          if (o.comm_end_s > r.comm_start_s && o.comm_start_s < r.comm_end_s)
            others.emplace_back(o.comm_start_s, o.comm_end_s);
        // A job that has done its iterations and keeps running contends too.
        if (k < res.background.size())
          for (const auto& b : res.background[k])
            if (b.second > r.comm_start_s && b.first < r.comm_end_s)
              others.push_back(b);
      }
      out[j].push_back(Covered(r.comm_start_s, r.comm_end_s, others));
    }
  }
  return out;
}

int InterleavedAt(const std::vector<std::vector<double>>& ov) {
  if (ov.size() < 2)
    return -1;
  size_t n = SIZE_MAX;
  for (const auto& v : ov)
    n = std::min(n, v.size());
  if (n == 0 || n == SIZE_MAX)
    return -1;
  int at = -1;
  for (int k = static_cast<int>(n) - 1; k >= 0; k--) {
    bool clean = true;
    for (const auto& v : ov)
      clean = clean && v[static_cast<size_t>(k)] < kInterleavedOverlap;
    if (!clean)
      break;
    at = k;
  }
  // The last iteration alone being clean is not a schedule.
  return at >= 0 && static_cast<size_t>(at) + 2 <= n ? at : -1;
}

// Max-min fair bytes of the bulk flow: the link shared with every job in its
// communication phase (an upper bound on what the jobs can take from it).
double BulkFairBytes(const RunResult& r, double link_bps) {
  std::vector<std::pair<double, int>> ev;
  for (const auto& job : r.records)
    for (const auto& it : job) {
      ev.emplace_back(std::max(it.comm_start_s, r.bulk_start_s), +1);
      ev.emplace_back(std::max(it.comm_end_s, r.bulk_start_s), -1);
    }
  for (const auto& job : r.background)
    for (const auto& iv : job) {
      ev.emplace_back(std::max(iv.first, r.bulk_start_s), +1);
      ev.emplace_back(std::max(iv.second, r.bulk_start_s), -1);
    }
  ev.emplace_back(r.bulk_start_s, 0);
  ev.emplace_back(r.bulk_end_s, 0);
  std::sort(ev.begin(), ev.end());
  double fair = 0, t = r.bulk_start_s;
  int active = 0;
  for (const auto& e : ev) {
    const double now = std::min(e.first, r.bulk_end_s);
    if (now > t)
      fair += (now - t) * link_bps / 8 / (1 + active);
    t = std::max(t, now);
    active += e.second;
  }
  return fair;
}

std::string Json(double v) {
  if (!std::isfinite(v))
    return "null";
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseOptions(argc, argv);
  CcKind cc;
  try {
    cc = ParseCc(o.cc);
  } catch (const std::exception& e) {
    Fail(std::string("--cc: ") + e.what());
  }
  std::vector<JobProfile> mix;
  try {
    std::vector<std::string> files;
    std::stringstream ss(o.profiles);
    std::string f;
    while (std::getline(ss, f, ','))
      if (!f.empty())
        files.push_back(f);
    if (files.empty())
      Fail("--profiles: no file given");
    const auto set = mltcp_sim::LoadProfiles(files);
    for (const auto& p : mltcp_sim::ParseMix(o.mix, set)) {
      if (p.bulk)
        o.bulk = true;  // the mix names a long-lived non-ML flow
      else
        mix.push_back(p);
    }
  } catch (const std::exception& e) {
    Fail(e.what());
  }
  if (mix.empty())
    Fail("--profile-mix names no training job (only bulk flows)");
  const uint32_t njobs = o.jobs ? o.jobs : static_cast<uint32_t>(mix.size());
  const uint32_t warmup = o.warmup >= 0 ? static_cast<uint32_t>(o.warmup) : o.iterations / 5;

  // Scale each profile to the link rate (bytes sized for 200 Mbit/s) and to
  // the time scale (compute time and bytes together).
  std::vector<JobPlan> plan;
  std::mt19937_64 gen(o.seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  const double byte_scale = o.link_gbps * 1000.0 / mltcp_sim::kProfileRefMbps * o.time_scale;
  for (uint32_t j = 0; j < njobs; j++) {
    JobPlan p;
    p.profile = mix[j % mix.size()];
    p.profile.bytes = static_cast<uint64_t>(std::llround(static_cast<double>(p.profile.bytes) * byte_scale));
    p.profile.compute_ms *= o.time_scale;
    p.profile.bucket_gap_us *= o.time_scale;
    if (p.profile.bytes < static_cast<uint64_t>(p.profile.buckets) * p.profile.conns)
      Fail("profile '" + p.profile.name + "' scales to fewer bytes than buckets x conns at this "
           "link rate and time scale");
    p.start_offset_s = o.start_spread_ms * 1e-3 * uni(gen) + o.start_gap_ms * 1e-3 * j;
    plan.push_back(p);
  }

  if (!o.quiet)
    std::cout << "mltcp-sim: " << njobs << " jobs, " << o.topology << ", " << o.link_gbps
              << " Gbit/s, cc " << CcName(cc) << ", " << o.iterations << " iterations\n";

  // Mixed run.
  Scenario mixed(o, cc);
  const RunResult res = mixed.Run(plan);
  if (!res.finished)
    Fail("simulation did not finish: a job stalled (simulated " + std::to_string(res.sim_end_s) +
         " s):" + res.stall);

  // Isolated runs: each distinct profile alone, same topology and cc.
  std::map<std::string, double> iso_mean;
  double iso_wall = 0;
  if (o.isolated) {
    Options io = o;
    io.bulk = false;
    for (const auto& p : plan) {
      if (iso_mean.count(p.profile.name))
        continue;
      JobPlan alone = p;
      alone.start_offset_s = 0;
      Scenario s(io, cc);
      const RunResult r = s.Run({alone});
      if (!r.finished)
        Fail("isolated run of '" + p.profile.name + "' did not finish:" + r.stall);
      iso_mean[p.profile.name] = Mean(IterTimes(r.records[0], warmup));
      iso_wall += r.wall_s;
    }
  }

  // Statistics.
  std::vector<JobStats> st(njobs);
  std::vector<double> pooled_ratio;
  double mean_ratio_sum = 0;
  for (uint32_t j = 0; j < njobs; j++) {
    const auto t = IterTimes(res.records[j], warmup);
    st[j].mean_s = Mean(t);
    st[j].p99_s = Percentile(t, 0.99);
    if (o.isolated) {
      st[j].iso_mean_s = iso_mean[plan[j].profile.name];
      st[j].mean_ratio = st[j].mean_s / st[j].iso_mean_s;
      st[j].p99_ratio = st[j].p99_s / st[j].iso_mean_s;
      mean_ratio_sum += st[j].mean_ratio;
      for (double x : t)
        pooled_ratio.push_back(x / st[j].iso_mean_s);
    }
  }
  const double mean_ratio = o.isolated ? mean_ratio_sum / njobs : NAN;
  const double p99_ratio = o.isolated ? Percentile(pooled_ratio, 0.99) : NAN;
  const auto overlaps = Overlaps(res);
  const int interleaved_at = InterleavedAt(overlaps);
  // Utilisation window: from the first communication (or the bulk flow's
  // start) to the last iteration's end (or the bulk flow's end).
  double t0 = o.bulk ? res.bulk_start_s : 1e300, t1 = o.bulk ? res.bulk_end_s : 0;
  for (const auto& job : res.records)
    for (const auto& r : job) {
      t0 = std::min(t0, r.comm_start_s);
      t1 = std::max(t1, r.end_s);
    }
  // Dumbbell: the bottleneck's; leaf-spine: the mean over leaf -> spine links.
  const double link_bytes = res.uplinks ? static_cast<double>(res.uplink_bytes) / res.uplinks
                                        : static_cast<double>(res.bottleneck_bytes);
  const double util =
      link_bytes > 0 && t1 > t0 ? link_bytes * 8 / (o.link_gbps * 1e9) / (t1 - t0) : NAN;
  double bulk_share = NAN;
  if (o.bulk && res.bulk_end_s > res.bulk_start_s)
    bulk_share = static_cast<double>(res.bulk_bytes) / BulkFairBytes(res, o.link_gbps * 1e9);
  const double events_per_s = res.wall_s > 0 ? static_cast<double>(res.events) / res.wall_s : 0;

  if (!o.quiet) {
    std::printf("%-4s %-14s %10s %10s %10s %8s %8s\n", "job", "profile", "mean_ms", "p99_ms",
                "alone_ms", "mean_x", "p99_x");
    for (uint32_t j = 0; j < njobs; j++)
      std::printf("%-4u %-14s %10.3f %10.3f %10.3f %8.3f %8.3f\n", j, plan[j].profile.name.c_str(),
                  st[j].mean_s * 1e3, st[j].p99_s * 1e3, st[j].iso_mean_s * 1e3, st[j].mean_ratio,
                  st[j].p99_ratio);
    std::printf("utilisation %.3f  drops %llu  events %llu  wall %.2f s (+%.2f s isolated)\n", util,
                static_cast<unsigned long long>(res.drops),
                static_cast<unsigned long long>(res.events), res.wall_s, iso_wall);
  }

  if (!o.out.empty()) {
    std::ofstream csv(o.out + ".csv");
    if (!csv)
      Fail("cannot write " + o.out + ".csv");
    csv << "job,profile,iteration,start_s,comm_start_s,comm_end_s,end_s,bytes,overlap\n";
    csv.precision(9);
    for (uint32_t j = 0; j < njobs; j++)
      for (size_t i = 0; i < res.records[j].size(); i++) {
        const auto& r = res.records[j][i];
        csv << j << ',' << plan[j].profile.name << ',' << r.iter << ',' << r.start_s << ','
            << r.comm_start_s << ',' << r.comm_end_s << ',' << r.end_s << ',' << r.bytes << ','
            << overlaps[j][i] << '\n';
      }
    std::ofstream js(o.out + ".json");
    if (!js)
      Fail("cannot write " + o.out + ".json");
    js << "{\n  \"cc\": \"" << CcName(cc) << "\", \"topology\": \"" << o.topology
       << "\", \"jobs\": " << njobs << ", \"link_gbps\": " << Json(o.link_gbps)
       << ", \"iterations\": " << o.iterations << ", \"warmup\": " << warmup
       << ", \"seed\": " << o.seed << ", \"mix\": \"" << o.mix << "\",\n"
       << "  \"keep_running\": " << (o.keep_running ? "true" : "false") << ",\n"
       << "  \"mean_ratio\": " << Json(mean_ratio) << ", \"p99_ratio\": " << Json(p99_ratio)
       << ", \"interleaved_at\": " << (interleaved_at < 0 ? "null" : std::to_string(interleaved_at))
       << ", \"utilisation\": " << Json(util) << ", \"drops\": " << res.drops
       << ", \"bulk_fair_share\": " << Json(bulk_share) << ",\n"
       << "  \"sim_s\": " << Json(res.sim_end_s) << ", \"wall_s\": " << Json(res.wall_s)
       << ", \"isolated_wall_s\": " << Json(iso_wall) << ", \"events\": " << res.events
       << ", \"events_per_s\": " << Json(events_per_s) << ", \"cnps\": " << res.cnps << ",\n"
       << "  \"per_job\": [\n";
    for (uint32_t j = 0; j < njobs; j++)
      js << "    {\"job\": " << j << ", \"profile\": \"" << plan[j].profile.name
         << "\", \"mean_s\": " << Json(st[j].mean_s) << ", \"p99_s\": " << Json(st[j].p99_s)
         << ", \"isolated_mean_s\": " << Json(st[j].iso_mean_s)
         << ", \"mean_ratio\": " << Json(st[j].mean_ratio)
         << ", \"p99_ratio\": " << Json(st[j].p99_ratio)
         << ", \"extra_iterations\": " << res.extra_iterations[j] << "}" << (j + 1 < njobs ? "," : "")
         << "\n";
    js << "  ]\n}\n";
  }

  std::printf("RESULT sim cc=%s jobs=%u topology=%s link_gbps=%g mean_ratio=%.3f p99_ratio=%.3f "
              "interleaved_at=%s utilisation=%.3f drops=%llu bulk_share=%.3f wall_s=%.2f "
              "events=%llu events_per_s=%.0f\n",
              CcName(cc), njobs, o.topology.c_str(), o.link_gbps, mean_ratio, p99_ratio,
              interleaved_at < 0 ? "none" : std::to_string(interleaved_at).c_str(), util,
              static_cast<unsigned long long>(res.drops), bulk_share, res.wall_s,
              static_cast<unsigned long long>(res.events), events_per_s);
  return 0;
}
