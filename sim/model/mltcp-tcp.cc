// SPDX-License-Identifier: GPL-2.0-only
//
// mltcp-tcp.cc - TcpMltcpReno and TcpMltcpCubic: ns-3 adapters around the
// MLTCP policy core (see mltcp-tcp.h for what is fed from where).
#include "mltcp-tcp.h"

#include <cctype>
#include <stdexcept>
#include <string>

#include "mltcp_options.hpp"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("MltcpTcp");
NS_OBJECT_ENSURE_REGISTERED(TcpMltcpReno);
NS_OBJECT_ENSURE_REGISTERED(TcpMltcpCubic);

// ---------------------------------------------------------------------------
// TcpCubic keeps its cnt computation (Update) and its ack counter private.
// MLTCP must scale exactly that cnt, as the kernel datapath does inside
// bictcp_update(), without copying CUBIC.  An explicit template instantiation
// may name private members ([temp.explicit]: access checking does not apply),
// which gives us member pointers to them; nothing else of TcpCubic is touched.
namespace {

template <typename Tag, typename Tag::type M>
struct PrivateMember {
  friend typename Tag::type Get(Tag) { return M; }
};

struct CubicCwndCnt {
  using type = uint32_t TcpCubic::*;
  friend type Get(CubicCwndCnt);
};
template struct PrivateMember<CubicCwndCnt, &TcpCubic::m_cWndCnt>;

struct CubicUpdate {
  using type = uint32_t (TcpCubic::*)(Ptr<TcpSocketState>);
  friend type Get(CubicUpdate);
};
template struct PrivateMember<CubicUpdate, &TcpCubic::Update>;

struct CubicEpochStart {
  using type = Time TcpCubic::*;
  friend type Get(CubicEpochStart);
};
template struct PrivateMember<CubicEpochStart, &TcpCubic::m_epochStart>;

// Linux srtt: EWMA with weight 1/8.
constexpr uint32_t kSrttShift = 3;

}  // namespace

// ---------------------------------------------------------------------------
uint32_t MltcpFlowState::NowUs() {
  return static_cast<uint32_t>(Simulator::Now().GetMicroSeconds());
}

void MltcpFlowState::Start() {
  if (started_)
    return;
  started_ = true;
  flow_ = mltcp::Flow(acked_total_, NowUs());
}

void MltcpFlowState::Sync(Ptr<const TcpSocketState> tcb) {
  tcb_ = tcb;
  Start();
  const SequenceNumber32 una = tcb->m_lastAckedSeq;
  if (!have_una_) {
    last_una_ = una;  // progress counts from the first hook on
    have_una_ = true;
  } else if (una > last_una_) {
    acked_total_ += static_cast<uint32_t>(una - last_una_);
    last_una_ = una;
  }
  flow_.OnAck(acked_total_, NowUs());
}

void MltcpFlowState::OnRtt(const Time& rtt) {
  if (rtt.IsZero() || rtt.IsNegative())
    return;
  const int64_t us = rtt.GetMicroSeconds();
  const uint32_t sample = us > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(us);
  if (srtt_us_ == 0)
    srtt_us_ = sample;
  else
    srtt_us_ = srtt_us_ - (srtt_us_ >> kSrttShift) + (sample >> kSrttShift);
}

bool MltcpFlowState::OnTxStart(Ptr<const TcpSocketState> tcb) {
  Sync(tcb);
  tx_starts_++;
  return flow_.OnTxStart(params_, acked_total_, NowUs(), srtt_us_);
}

void MltcpFlowState::Hint(uint64_t bytes) {
  if (tcb_)
    Sync(tcb_);
  else
    Start();  // a hint before the first ack: nothing acked yet
  flow_.Hint(acked_total_, bytes, NowUs());
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
          .SetParent<TcpLinuxReno>()
          .SetGroupName("Internet")
          .AddConstructor<TcpMltcpReno>());
  return tid;
}

void TcpMltcpReno::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked,
                             const Time& rtt) {
  TcpLinuxReno::PktsAcked(tcb, segmentsAcked, rtt);
  state_.OnRtt(rtt);
  state_.Sync(tcb);
}

void TcpMltcpReno::CwndEvent(Ptr<TcpSocketState> tcb,
                             const TcpSocketState::TcpCAEvent_t event) {
  TcpLinuxReno::CwndEvent(tcb, event);
  if (event == TcpSocketState::CA_EVENT_TX_START)
    state_.OnTxStart(tcb);
}

// tcp_reno_ssthresh() keeping cwnd * F/2 instead of cwnd/2, as the kernel
// datapath; TcpLinuxReno's own value whenever the decrease is not scaled.
uint32_t TcpMltcpReno::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) {
  state_.Sync(tcb);
  const uint32_t beta =
      mltcp_decrease_beta(MLTCP_RENO_BETA, state_.Gain(), &state_.params().raw());
  if (beta == MLTCP_RENO_BETA)
    return TcpLinuxReno::GetSsThresh(tcb, bytesInFlight);
  return mltcp_ssthresh(tcb->GetCwndInSegments(), beta) * tcb->m_segmentSize;
}

// tcp_cong_avoid_ai(tp, mltcp_reno_ai_w(cwnd, F), acked), as the kernel
// datapath calls it; with F = 1 this is exactly TcpLinuxReno's.
void TcpMltcpReno::CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) {
  state_.Sync(tcb);
  const uint32_t cwnd = std::max<uint32_t>(tcb->GetCwndInSegments(), 1);
  const uint32_t w = mltcp_reno_ai_w(cwnd, state_.Gain());
  last_ai_w_ = w;
  if (cwnd_cnt_ >= w) {
    cwnd_cnt_ = 0;
    tcb->m_cWnd += tcb->m_segmentSize;
  }
  cwnd_cnt_ += segmentsAcked;
  if (cwnd_cnt_ >= w) {
    const uint32_t delta = cwnd_cnt_ / w;
    cwnd_cnt_ -= delta * w;
    tcb->m_cWnd += delta * tcb->m_segmentSize;
  }
}

// ---------------------------------------------------------------------------
TypeId TcpMltcpCubic::GetTypeId() {
  static TypeId tid = AddMltcpAttributes<TcpMltcpCubic>(
      TypeId("ns3::TcpMltcpCubic")
          .SetParent<TcpCubic>()
          .SetGroupName("Internet")
          .AddConstructor<TcpMltcpCubic>());
  return tid;
}

// TcpCubic's loss response (W_max, fast convergence, end of epoch) with the
// window kept at 0.7 * F instead of 0.7, as the kernel datapath.
uint32_t TcpMltcpCubic::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) {
  // tcp_cubic.c's beta, 717/1024; ns-3's "Beta" attribute defaults to 0.7.
  constexpr uint32_t kCubicBeta = 717;
  const uint32_t base = TcpCubic::GetSsThresh(tcb, bytesInFlight);
  state_.Sync(tcb);
  const uint32_t beta = mltcp_decrease_beta(kCubicBeta, state_.Gain(), &state_.params().raw());
  if (beta == kCubicBeta)
    return base;
  return mltcp_ssthresh(tcb->GetCwndInSegments(), beta) * tcb->m_segmentSize;
}

void TcpMltcpCubic::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked,
                              const Time& rtt) {
  TcpCubic::PktsAcked(tcb, segmentsAcked, rtt);
  state_.OnRtt(rtt);
  state_.Sync(tcb);
}

void TcpMltcpCubic::CwndEvent(Ptr<TcpSocketState> tcb,
                              const TcpSocketState::TcpCAEvent_t event) {
  TcpCubic::CwndEvent(tcb, event);
  if (event == TcpSocketState::CA_EVENT_TX_START)
    state_.OnTxStart(tcb);
}

// Slow start is TcpCubic's own (HyStart included; F never scales it).  In
// congestion avoidance this is TcpCubic::IncreaseWindow with the two MLTCP
// scalings of core/mltcp_window.h: CUBIC's clock advances F times as fast
// (mltcp_cubic_epoch_scale moves the epoch start before the curve is
// evaluated, in microseconds like the BPF port; ns-3 evaluates the curve on
// every ack), and the cnt that TcpCubic::Update returns goes through
// mltcp_cubic_cnt().  ns-3 3.37's CUBIC has no TCP-friendly region, so
// mltcp_cubic_friendly_acks has nothing to scale.  ns-3's Update() already
// applies max(cnt, 2); the core clamps at 2 again, so the only difference
// from the kernel order is for a raw cnt below 2.
void TcpMltcpCubic::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) {
  state_.Sync(tcb);
  if (tcb->m_cWnd < tcb->m_ssThresh) {
    TcpCubic::IncreaseWindow(tcb, segmentsAcked);
    return;
  }
  if (segmentsAcked == 0)
    return;
  const uint32_t gain = state_.Gain();
  Time& epoch = this->*Get(CubicEpochStart());
  const uint32_t now_us = MltcpFlowState::NowUs();
  if (epoch != Time::Min() && epoch_seen_) {
    const uint32_t old_us = static_cast<uint32_t>(epoch.GetMicroSeconds());
    const uint32_t new_us = mltcp_cubic_epoch_scale(old_us, now_us, now_us - last_eval_us_, gain,
                                                    &epoch_carry_);
    epoch += MicroSeconds(static_cast<int32_t>(new_us - old_us));
  } else {
    epoch_carry_ = 0;  // a new epoch starts in Update() below
  }
  uint32_t& cwnd_cnt = this->*Get(CubicCwndCnt());
  cwnd_cnt += segmentsAcked;
  last_base_cnt_ = (this->*Get(CubicUpdate()))(tcb);
  epoch_seen_ = true;
  last_eval_us_ = now_us;
  last_cnt_ = mltcp_cubic_cnt(last_base_cnt_, gain);
  if (cwnd_cnt >= last_cnt_) {
    tcb->m_cWnd += tcb->m_segmentSize;
    cwnd_cnt -= last_cnt_;
  }
}

}  // namespace ns3
