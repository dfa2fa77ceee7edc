// SPDX-License-Identifier: GPL-2.0-only
//
// mltcp-tcp.cc - TcpMltcpReno and TcpMltcpCubic: ns-3 adapters around the
// MLTCP policy core (see mltcp-tcp.h for what is fed from where).
#include "mltcp-tcp.h"

#include <cctype>
#include <limits>
#include <stdexcept>
#include <string>

#include "mltcp_options.hpp"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/tcp-rx-buffer.h"
#include "ns3/uinteger.h"

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("MltcpTcp");
NS_OBJECT_ENSURE_REGISTERED(TcpMltcpReno);
NS_OBJECT_ENSURE_REGISTERED(TcpMltcpCubic);

namespace {

// Linux srtt: EWMA with weight 1/8.
constexpr uint32_t kSrttShift = 3;

// ns-3's byte-counted window as the core's segment-counted one.
mltcp_window WindowOf(Ptr<const TcpSocketState> tcb, uint32_t cwnd_cnt) {
  mltcp_window w;
  w.cwnd = std::max<uint32_t>(tcb->GetCwndInSegments(), 1);
  w.ssthresh = std::max<uint32_t>(tcb->GetSsThreshInSegments(), 1);
  w.cwnd_cnt = cwnd_cnt;
  w.cwnd_clamp = UINT32_MAX / tcb->m_segmentSize;
  return w;
}

// Writes the core's growth back; a sub-segment part of m_cWnd is kept.
void ApplyGrowth(Ptr<TcpSocketState> tcb, const mltcp_window& before, const mltcp_window& after,
                 uint32_t* cwnd_cnt) {
  if (after.cwnd > before.cwnd)
    tcb->m_cWnd += (after.cwnd - before.cwnd) * tcb->m_segmentSize;
  *cwnd_cnt = after.cwnd_cnt;
}

// The start drain's result (mltcp_start_cwnd) on ns-3's window: a lower
// window becomes cwnd and ssthresh (mltcp_window_start).
void ApplyStart(Ptr<TcpSocketState> tcb, uint32_t start, uint32_t* cwnd_cnt) {
  mltcp_window w = WindowOf(tcb, *cwnd_cnt);
  const uint32_t before = w.cwnd;
  mltcp_window_start(&w, start);
  if (w.cwnd >= before)
    return;
  tcb->m_cWnd = w.cwnd * tcb->m_segmentSize;
  tcb->m_ssThresh = w.ssthresh * tcb->m_segmentSize;
  *cwnd_cnt = w.cwnd_cnt;
}

// tcp_reno_cong_avoid() / cubictcp_cong_avoid() on ns-3's window: the core's
// slow start, then tcp_cong_avoid_ai with ai_w(cwnd, acked) segments per
// increase; returns that w (0 when slow start used every acked segment).
template <typename AiW>
uint32_t CongAvoid(Ptr<TcpSocketState> tcb, uint32_t* cwnd_cnt, uint32_t acked, AiW ai_w) {
  const mltcp_window before = WindowOf(tcb, *cwnd_cnt);
  mltcp_window w = before;
  uint32_t per_inc = 0;
  if (mltcp_window_in_slow_start(&w))
    acked = mltcp_window_slow_start(&w, acked);
  if (acked) {
    per_inc = ai_w(w.cwnd, acked);
    mltcp_window_cong_avoid_ai(&w, per_inc, acked);
  }
  ApplyGrowth(tcb, before, w, cwnd_cnt);
  return per_inc;
}

}  // namespace

// ---------------------------------------------------------------------------
uint32_t MltcpFlowState::NowUs() {
  return static_cast<uint32_t>(Simulator::Now().GetMicroSeconds());
}

uint32_t MltcpFlowState::DrawSeed() {
  return CreateObject<UniformRandomVariable>()->GetInteger(
      0, std::numeric_limits<uint32_t>::max());
}

void MltcpFlowState::Seed(uint32_t random) {
  Start();
  flow_.Seed(params_, random);
}

void MltcpFlowState::Start() {
  if (started_)
    return;
  started_ = true;
  flow_ = mltcp::Flow(acked_.total(), NowUs());
  flow_.Seed(params_, DrawSeed());
}

void MltcpFlowState::Sync(Ptr<const TcpSocketState> tcb) {
  tcb_ = tcb;
  Start();
  acked_.Fold(tcb->m_lastAckedSeq);  // progress counts from the first hook on
  if (tcb->m_rxBuffer)
    received_.Fold(tcb->m_rxBuffer->NextRxSequence());
  flow_.OnAck(acked_.total(), NowUs());
}

void MltcpFlowState::OnRtt(const Time& rtt) {
  if (rtt.IsZero() || rtt.IsNegative())
    return;
  const int64_t us = rtt.GetMicroSeconds();
  const uint32_t sample = us > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(us);
  if (min_rtt_us_ == 0 || sample < min_rtt_us_)
    min_rtt_us_ = sample;
  if (srtt_us_ == 0)
    srtt_us_ = sample;
  else
    srtt_us_ = srtt_us_ - (srtt_us_ >> kSrttShift) + (sample >> kSrttShift);
}

bool MltcpFlowState::TailHold(Ptr<const TcpSocketState> tcb) const {
  return mltcp_tail_hold(&flow_.state(), &params_.raw(), tcb->GetCwndInSegments(),
                         tcb->m_segmentSize);
}

bool MltcpFlowState::OnTxStart(Ptr<const TcpSocketState> tcb) {
  Sync(tcb);
  tx_starts_++;
  return flow_.OnTxStart(params_, acked_.total(), NowUs(), srtt_us_);
}

void MltcpFlowState::Hint(uint64_t bytes) {
  if (tcb_)
    Sync(tcb_);
  else
    Start();  // a hint before the first ack: nothing acked yet
  flow_.Hint(acked_.total(), bytes, NowUs());
}

bool MltcpHint(Ptr<TcpCongestionOps> cc, uint64_t bytes) {
  if (auto reno = DynamicCast<TcpMltcpReno>(cc)) {
    reno->Hint(bytes);
    return true;
  }
  if (auto cubic = DynamicCast<TcpMltcpCubic>(cc)) {
    cubic->Hint(bytes);
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Attributes shared by both classes: one per row of the core's parameter
// table (core/mltcp_param_table.h), named in CamelCase ("gain_min" ->
// "GainMin"); a 0..1 row is a BooleanValue, any other a UintegerValue with
// the row's range.  A write is checked with the whole set (an invalid value
// is a fatal configuration error).
namespace {

template <typename Cc>
class MltcpParamAccessor : public AttributeAccessor {
 public:
  explicit MltcpParamAccessor(const mltcp::ParamSpec& row) : row_(row) {}

  bool Set(ObjectBase* object, const AttributeValue& value) const override {
    auto* cc = dynamic_cast<Cc*>(object);
    uint64_t v = 0;
    if (auto* b = dynamic_cast<const BooleanValue*>(&value))
      v = b->Get() ? 1 : 0;
    else if (auto* u = dynamic_cast<const UintegerValue*>(&value))
      v = u->Get();
    else
      return false;
    if (!cc)
      return false;
    mltcp_params raw = cc->state().params().raw();
    try {
      mltcp::SetParam(raw, row_.name, std::to_string(v));
      mltcp::Validate(raw);
    } catch (const std::invalid_argument& e) {
      NS_FATAL_ERROR("MLTCP parameter rejected: " << e.what());
    }
    cc->state().SetParams(mltcp::Params(raw));
    return true;
  }
  bool Get(const ObjectBase* object, AttributeValue& value) const override {
    auto* cc = dynamic_cast<Cc*>(const_cast<ObjectBase*>(object));
    if (!cc)
      return false;
    const uint64_t v = mltcp::GetParam(&cc->state().params().raw(), row_);
    if (auto* b = dynamic_cast<BooleanValue*>(&value)) {
      b->Set(v != 0);
      return true;
    }
    if (auto* u = dynamic_cast<UintegerValue*>(&value)) {
      u->Set(v);
      return true;
    }
    return false;
  }
  bool HasGetter() const override { return true; }
  bool HasSetter() const override { return true; }

 private:
  mltcp::ParamSpec row_;
};

std::string AttributeName(const char* field) {
  std::string out;
  bool upper = true;
  for (const char* c = field; *c; c++) {
    if (*c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(*c))) : *c;
    upper = false;
  }
  return out;
}

template <typename Cc>
TypeId AddMltcpAttributes(TypeId tid) {
  for (const auto& r : mltcp::ParamTable<mltcp_params>::Rows()) {
    if (!(r.scope & MLTCP_PS_WINDOW)) continue;  // the job rows: ns-3 has no jobs
    const std::string help = std::string(r.help) + " (" + r.unit + ")";
    Ptr<const AttributeAccessor> acc(new MltcpParamAccessor<Cc>(r), false);
    if (r.min == 0 && r.max == 1)
      tid.AddAttribute(AttributeName(r.name), help, BooleanValue(r.def != 0), acc,
                       MakeBooleanChecker());
    else
      tid.AddAttribute(AttributeName(r.name), help, UintegerValue(r.def), acc,
                       MakeUintegerChecker<uint32_t>(static_cast<uint32_t>(r.min),
                                                     static_cast<uint32_t>(r.max)));
  }
  return tid;
}

}  // namespace

// ---------------------------------------------------------------------------
TypeId TcpMltcpReno::GetTypeId() {
  static TypeId tid = AddMltcpAttributes<TcpMltcpReno>(
      TypeId("ns3::TcpMltcpReno")
          .SetParent<TcpCongestionOps>()
          .SetGroupName("Internet")
          .AddConstructor<TcpMltcpReno>());
  return tid;
}

TcpMltcpReno::TcpMltcpReno() { mltcp_reno_cache_init(&cache_); }

// The connection is established: the tracker starts here (tcp_init_congestion_control).
void TcpMltcpReno::Init(Ptr<TcpSocketState> tcb) { state_.Sync(tcb); }

void TcpMltcpReno::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t, const Time& rtt) {
  state_.OnRtt(rtt);
  state_.Sync(tcb);
}

// CA_EVENT_TX_START: the tracker, then the window the iteration starts with.
void TcpMltcpReno::CwndEvent(Ptr<TcpSocketState> tcb,
                             const TcpSocketState::TcpCAEvent_t event) {
  if (event != TcpSocketState::CA_EVENT_TX_START)
    return;
  state_.OnTxStart(tcb);
  ApplyStart(tcb,
             mltcp_start_cwnd(&state_.flow().mutable_state(), &state_.params().raw(),
                              tcb->GetCwndInSegments(), tcb->m_segmentSize, state_.min_rtt_us(),
                              state_.srtt_us(), state_.acked_total(), state_.received_total(),
                              nullptr),
             &cwnd_cnt_);
}

// tcp_reno_ssthresh() keeping cwnd * F/2 (the core's Reno step).  A window
// reduction starts: its ack counter restarts (tcp_init_cwnd_reduction).
uint32_t TcpMltcpReno::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t) {
  state_.Sync(tcb);
  cwnd_cnt_ = 0;
  return mltcp_decrease_ssthresh(tcb->GetCwndInSegments(), MLTCP_RENO_BETA, state_.Gain(),
                                 &state_.params().raw(), state_.TwoWay()) *
         tcb->m_segmentSize;
}

// tcp_reno_cong_avoid(): the core's slow start, then tcp_cong_avoid_ai with
// w from the core's per-ack cache, as the kernel and BPF datapaths.
void TcpMltcpReno::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) {
  state_.Sync(tcb);
  if (state_.TailHold(tcb))
    return;
  const uint32_t w = CongAvoid(tcb, &cwnd_cnt_, segmentsAcked, [this](uint32_t cwnd, uint32_t) {
    return mltcp_reno_ai_w_cached(&cache_, &state_.flow().state(), &state_.params().raw(), cwnd);
  });
  if (w)
    last_ai_w_ = w;
}

// ---------------------------------------------------------------------------
TypeId TcpMltcpCubic::GetTypeId() {
  static TypeId tid = AddMltcpAttributes<TcpMltcpCubic>(
      TypeId("ns3::TcpMltcpCubic")
          .SetParent<TcpCongestionOps>()
          .SetGroupName("Internet")
          .AddConstructor<TcpMltcpCubic>());
  return tid;
}

TcpMltcpCubic::TcpMltcpCubic() = default;

void TcpMltcpCubic::Init(Ptr<TcpSocketState> tcb) {
  Start(tcb);
  state_.Sync(tcb);
}

// cubictcp_init() on the first hook, when the socket's sequence numbers exist.
void TcpMltcpCubic::Start(Ptr<const TcpSocketState> tcb) {
  if (bic_started_)
    return;
  bic_started_ = true;
  mltcp_bictcp_init(&bic_, MltcpFlowState::NowUs(), tcb->m_nextTxSequence.Get().GetValue());
}

// bictcp_recalc_ssthresh(): W_max, fast convergence; keeps 0.7 * F.
uint32_t TcpMltcpCubic::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t) {
  Start(tcb);
  state_.Sync(tcb);
  cwnd_cnt_ = 0;  // a window reduction starts (tcp_init_cwnd_reduction)
  return mltcp_bictcp_ssthresh(&bic_, tcb->GetCwndInSegments(), state_.Gain(),
                               &state_.params().raw(), state_.TwoWay()) *
         tcb->m_segmentSize;
}

// cubictcp_acked(): delay_min and HyStart (which sets ssthresh to cwnd).
void TcpMltcpCubic::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t, const Time& rtt) {
  Start(tcb);
  state_.OnRtt(rtt);
  state_.Sync(tcb);
  mltcp_cubic_rtt_sample s{};
  const int64_t us = rtt.GetMicroSeconds();
  s.rtt_us = rtt.IsNegative() || rtt.IsZero() ? -1 : static_cast<int32_t>(std::min<int64_t>(us, INT32_MAX));
  s.now_us = MltcpFlowState::NowUs();
  s.cwnd = tcb->GetCwndInSegments();
  s.snd_una = tcb->m_lastAckedSeq.GetValue();
  s.snd_nxt = tcb->m_nextTxSequence.Get().GetValue();
  s.in_slow_start = tcb->m_cWnd < tcb->m_ssThresh;
  s.ack_delay_us = 0;
  s.paced = tcb->m_pacing;
  if (mltcp_bictcp_on_rtt(&bic_, &s))
    tcb->m_ssThresh = tcb->m_cWnd;
}

// CA_EVENT_TX_START: the epoch moves by the idle time, then the tracker,
// then the window the iteration starts with.
void TcpMltcpCubic::CwndEvent(Ptr<TcpSocketState> tcb,
                              const TcpSocketState::TcpCAEvent_t event) {
  if (event != TcpSocketState::CA_EVENT_TX_START)
    return;
  Start(tcb);
  const uint32_t now = MltcpFlowState::NowUs();
  mltcp_bictcp_on_tx_start(&bic_, now,
                           mltcp_elapsed_us(state_.flow().state().last_active_us, now));
  state_.OnTxStart(tcb);
  ApplyStart(tcb,
             mltcp_bictcp_start_cwnd(&bic_, &state_.flow().mutable_state(),
                                     &state_.params().raw(), tcb->GetCwndInSegments(),
                                     tcb->m_segmentSize,
                                     state_.min_rtt_us(), state_.srtt_us(),
                                     state_.acked_total(), state_.received_total(), nullptr),
             &cwnd_cnt_);
}

// bictcp_state(TCP_CA_Loss): a retransmission timeout restarts CUBIC.
void TcpMltcpCubic::CongestionStateSet(Ptr<TcpSocketState> tcb,
                                       const TcpSocketState::TcpCongState_t newState) {
  if (newState == TcpSocketState::CA_LOSS) {
    bic_started_ = true;
    mltcp_bictcp_on_rto(&bic_, MltcpFlowState::NowUs(), tcb->m_nextTxSequence.Get().GetValue());
  }
}

// cubictcp_cong_avoid(): the core's slow start, then tcp_cong_avoid_ai
// with CUBIC's cnt scaled by F (the gain on every update, as the kernel).
void TcpMltcpCubic::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) {
  Start(tcb);
  state_.Sync(tcb);
  if (state_.TailHold(tcb))
    return;
  const uint32_t w =
      CongAvoid(tcb, &cwnd_cnt_, segmentsAcked, [this](uint32_t cwnd, uint32_t acked) {
        return mltcp_bictcp_cong_avoid(&bic_, cwnd, acked, MltcpFlowState::NowUs(),
                                       state_.CubicGain());
      });
  if (w)
    last_cnt_ = w;
}

}  // namespace ns3
